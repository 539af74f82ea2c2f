// Net::HTTP#verify_callback inside ruby.wasm 4.0 and 3.4 (both Node
// transports), compared with native MRI running the net/http sources of the
// same version against the same servers: the calls the callback gets (one
// per certificate of the chain, preverify_ok, the certificate, the error),
// a callback that accepts a self-signed certificate, one that rejects a
// good one, the host name check folded into the leaf's call, and
// verify_mode VERIFY_NONE.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSIONS, bootThreadVM, onWaitingVM, rbJSON, runNative, listen, closeServer, makeCerts, haveOpenssl, haveNativeRuby } from '../support/browser/harness.mjs';
import { netHttpSources } from '../support/faults/index.mjs';

const skip = !haveOpenssl() ? 'openssl is not installed' : !haveNativeRuby() ? 'native ruby is not installed' : false;

// a CA and a certificate for localhost it issued
function makeChain(dir) {
  const f = (n) => join(dir, n);
  const run = (args) => execFileSync('openssl', args, { stdio: 'ignore', timeout: 30000 });
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=Test CA']);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('leaf.key'), '-out', f('leaf.csr'), '-subj', '/CN=localhost']);
  writeFileSync(f('leaf.ext'), 'subjectAltName=DNS:localhost\n');
  run(['x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('leaf.pem'), '-days', '2', '-extfile', f('leaf.ext')]);
  return { caPath: f('ca.pem'), key: readFileSync(f('leaf.key')), cert: readFileSync(f('leaf.pem')) };
}

function script({ selfPort, chainPort, selfCa, chainCa }) {
  return `
    require 'openssl'
    out = []
    calls = []
    record = ->(ret) { ->(ok, ctx) { calls << [ok, ctx.current_cert.subject.to_s, ctx.error, ctx.error_string]; ret.nil? ? ok : ret } }
    t = ->(&b) {
      calls.clear
      r = begin; ['ok', b.call]; rescue Exception => e; [e.class.name, e.message]; end
      out << [r, calls.dup]
    }
    get = ->(host, port, cb, **o) {
      h = Net::HTTP.new(host, port); h.use_ssl = true; h.verify_callback = cb
      o.each { |k, v| h.send("#{k}=", v) }
      h.start { h.get('/x').body }
    }
    # 0: a trusted self-signed certificate: one call
    t.() { get.('localhost', ${selfPort}, record.(nil), ca_file: ${JSON.stringify(selfCa)}) }
    # 1: a chain of two, trusted through its CA: a call per certificate
    t.() { get.('localhost', ${chainPort}, record.(nil), ca_file: ${JSON.stringify(chainCa)}) }
    # 2: an untrusted self-signed certificate, the callback's answer kept
    t.() { get.('localhost', ${selfPort}, record.(nil)) }
    # 3: the same, accepted by the callback
    t.() { get.('localhost', ${selfPort}, record.(true)) }
    # 4: a good certificate rejected by the callback
    t.() { get.('localhost', ${chainPort}, record.(false), ca_file: ${JSON.stringify(chainCa)}) }
    # 5: a name the certificate does not have (connecting to ipaddr)
    t.() { get.('other.test', ${selfPort}, record.(nil), ca_file: ${JSON.stringify(selfCa)}, ipaddr: '127.0.0.1') }
    # 6: the same, accepted by the callback: post_connection_check still fails
    t.() { get.('other.test', ${selfPort}, record.(true), ca_file: ${JSON.stringify(selfCa)}, ipaddr: '127.0.0.1') }
    # 7: the same with verify_hostname false
    t.() { get.('other.test', ${selfPort}, record.(nil), ca_file: ${JSON.stringify(selfCa)}, ipaddr: '127.0.0.1', verify_hostname: false) }
    # 8: an IP address: no name check in the handshake, post_connection_check
    t.() { get.('127.0.0.1', ${chainPort}, record.(nil), ca_file: ${JSON.stringify(chainCa)}) }
    # 9: VERIFY_NONE: the callback is still called, its answer ignored
    t.() { get.('localhost', ${selfPort}, record.(false), verify_mode: OpenSSL::SSL::VERIFY_NONE) }
    # 10: a callback that raises counts as false
    t.() { get.('localhost', ${selfPort}, ->(ok, ctx) { calls << ok; raise 'boom' }, ca_file: ${JSON.stringify(selfCa)}) }
    out.to_json
  `;
}

describe('verify_callback', { skip, timeout: 240000 }, () => {
  let certs;
  let chain;
  let selfSrv;
  let chainSrv;
  const conns = new Set();
  const ports = {};
  const sources = {};

  before(async () => {
    certs = makeCerts();
    chain = makeChain(certs.dir);
    const handler = (req, res) => {
      conns.add(req.socket);
      res.end(`secure ${req.url}`);
    };
    selfSrv = https.createServer({ key: certs.key, cert: certs.cert }, handler);
    chainSrv = https.createServer({ key: chain.key, cert: chain.cert }, handler);
    ports.selfPort = await listen(selfSrv);
    ports.chainPort = await listen(chainSrv);
    ports.selfCa = certs.certPath;
    ports.chainCa = chain.caPath;
    for (const v of VERSIONS) sources[v] = await netHttpSources(v);
  });

  after(async () => {
    await closeServer(selfSrv, conns);
    await closeServer(chainSrv, conns);
    for (const s of Object.values(sources)) s.cleanup();
    certs.cleanup();
  });

  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}, both transports, as native MRI`, async (t) => {
      const code = script(ports);
      const mri = JSON.parse((await runNative(`$stderr.reopen(File::NULL)\nputs(begin\n${code}\nend)`, { load: [sources[version].dir] })).trim().split('\n').pop());
      // what MRI did, so that a change of the oracle is noticed
      assert.deepEqual(mri[0][0], ['ok', 'secure /x']);
      assert.deepEqual(mri[0][1].map((c) => c.slice(0, 2)), [[true, '/CN=localhost']]);
      assert.deepEqual(mri[1][1].map((c) => c.slice(0, 2)), [[true, '/CN=Test CA'], [true, '/CN=localhost']]);
      assert.equal(mri[2][0][0], 'OpenSSL::SSL::SSLError');
      assert.equal(mri[2][0][1], `SSL_connect returned=1 errno=0 peeraddr=127.0.0.1:${ports.selfPort} state=error: certificate verify failed (self-signed certificate)`);
      assert.deepEqual(mri[3][0], ['ok', 'secure /x']);
      assert.match(mri[4][0][1], /certificate verify failed \(certificate rejected\)/);

      // (null where the VM's fibers cannot parse certificates)
      const waiting = await onWaitingVM(t, version, (vm) => rbJSON(vm, `JSON.parse(begin\n${code}\nend)`));
      const thread = await bootThreadVM(version);
      let blocking;
      try {
        blocking = await rbJSON(thread, `JSON.parse(begin\n${code}\nend)`);
      } finally {
        await thread.close();
      }
      for (let i = 0; i < mri.length; i++) {
        if (waiting) assert.deepEqual(waiting[i], mri[i], `waiting transport, case ${i}`);
        assert.deepEqual(blocking[i], mri[i], `blocking transport, case ${i}`);
      }
    });
  }
});
