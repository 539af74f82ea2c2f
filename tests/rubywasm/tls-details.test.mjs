// TLS details and connection options of Net::HTTP inside ruby.wasm 4.0 and
// 3.4 (both Node transports), compared with native MRI running the net/http
// sources of the same version against the same servers: peer_cert,
// SSLSocket#session_reused? on a new connection, TLS sessions resumed (by
// Net::HTTP's next connection, by SSLSocket#session=), ca_path as a host folder of
// hashed certificate names, local_host / local_port, a host given as an
// object that converts with to_str.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdirSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSIONS, bootThreadVM, onWaitingVM, rbJSON, runNative, listen, closeServer, makeCerts, haveOpenssl, haveNativeRuby } from '../support/browser/harness.mjs';
import { netHttpSources } from '../support/faults/index.mjs';

const skip = !haveOpenssl() ? 'openssl is not installed' : !haveNativeRuby() ? 'native ruby is not installed' : false;

async function freePort() {
  const s = net.createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

function script({ goodPort, plainPort, ca, caDir, localPort }) {
  return `
    require 'openssl'
    out = []
    t = ->(&b) { begin; out << ['ok', b.call]; rescue Exception => e; out << [e.class.name, e.message]; end }
    # 0: peer_cert and session_reused? of a new connection
    t.() {
      h = Net::HTTP.new('localhost', ${goodPort}); h.use_ssl = true; h.ca_file = ${JSON.stringify(ca)}
      before = h.peer_cert
      h.start {
        c = h.peer_cert
        [before, c.class.name, c.subject.to_s, c.issuer.to_s, c.serial.to_s, OpenSSL::Digest::SHA256.hexdigest(c.to_der),
         c.extensions.map(&:to_s).grep(/subjectAltName/), h.instance_variable_get(:@socket).io.session_reused?, h.get('/p').body]
      }
    }
    # 1: peer_cert of a plain connection
    t.() { Net::HTTP.start('127.0.0.1', ${plainPort}) { |h| [h.peer_cert, h.get('/plain').body] } }
    # 2: ca_path: a folder of the host with hashed names
    t.() { Net::HTTP.start('localhost', ${goodPort}, use_ssl: true, ca_path: ${JSON.stringify(caDir)}) { |h| h.get('/capath').body } }
    # 3: X509::Store#add_path of that folder
    t.() {
      s = OpenSSL::X509::Store.new; s.add_path(${JSON.stringify(caDir)})
      Net::HTTP.start('localhost', ${goodPort}, use_ssl: true, cert_store: s) { |h| h.get('/addpath').body }
    }
    # 4: local_host and local_port (the server answers with the peer's address)
    t.() {
      h = Net::HTTP.new('127.0.0.1', ${plainPort}); h.local_host = '127.0.0.1'; h.local_port = ${localPort}
      h.start { h.get('/local').body == "plain GET /local 127.0.0.1:${localPort}" }
    }
    # 5: local_host alone
    t.() {
      h = Net::HTTP.new('127.0.0.1', ${plainPort}); h.local_host = '127.0.0.1'
      h.start { h.get('/lh').body.start_with?('plain GET /lh 127.0.0.1:') }
    }
    # 6: a host that is not a String: TCPSocket.open converts it with to_str
    t.() {
      host = Struct.new(:to_s).new('<example>')
      def host.to_str; raise SocketError, 'open failure'; end
      Net::HTTP.get(Struct.new(:scheme, :hostname, :port).new('http', host, 2119))
    }
    # 7: a new connection of the same Net::HTTP resumes the TLS session of the last one
    t.() {
      h = Net::HTTP.new('localhost', ${goodPort}); h.use_ssl = true; h.ca_file = ${JSON.stringify(ca)}
      r = []
      2.times { |i| h.start { r << h.instance_variable_get(:@socket).io.session_reused? << h.get("/again#{i}").body[/secure GET \\S+/] } }
      s = h.instance_variable_get(:@ssl_session)
      r << s.class.name << s.id.bytesize << (s.time.to_f - Time.now.to_f).abs.round(-3) << s.timeout.is_a?(Integer)
      r << (OpenSSL::SSL::Session.new(s.to_der) == s) << (OpenSSL::SSL::Session.new(s.to_pem) == s)
      # another Net::HTTP does not
      Net::HTTP.start('localhost', ${goodPort}, use_ssl: true, ca_file: ${JSON.stringify(ca)}) { |o| r << o.instance_variable_get(:@socket).io.session_reused? }
    }
    # 8: SSLSocket#session and #session=
    t.() {
      ctx = OpenSSL::SSL::SSLContext.new; ctx.ca_file = ${JSON.stringify(ca)}; ctx.verify_mode = OpenSSL::SSL::VERIFY_PEER
      get = ->(session) {
        s = OpenSSL::SSL::SSLSocket.new(TCPSocket.new('localhost', ${goodPort}), ctx); s.hostname = 'localhost'; s.sync_close = true
        s.session = session if session
        s.connect
        s.write("GET /raw HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
        body = +''
        body << s.readpartial(4096) until body =~ /secure GET \\S+ /
        [s.session_reused?, body[/secure GET \\S+/], s.session].tap { s.close }
      }
      a = get.(nil)
      b = get.(a[2])
      [a[0], a[1], a[2].class.name, b[0], b[1], (OpenSSL::SSL::Session.new('junk') rescue $!.class.name), begin; OpenSSL::SSL::SSLSocket.new(TCPSocket.new('localhost', ${goodPort})).session = 1; rescue => e; e.class.name; end]
    }
    out.to_json
  `;
}

describe('TLS details and local address', { skip, timeout: 240000 }, () => {
  let certs;
  let good;
  let plain;
  const conns = new Set();
  const ports = {};
  const sources = {};

  before(async () => {
    certs = makeCerts();
    const handler = (req, res) => {
      conns.add(req.socket);
      res.end(`${req.socket.encrypted ? 'secure' : 'plain'} ${req.method} ${req.url} ${req.socket.remoteAddress}:${req.socket.remotePort}`);
    };
    good = https.createServer({ key: certs.key, cert: certs.cert }, handler);
    plain = http.createServer(handler);
    ports.goodPort = await listen(good);
    ports.plainPort = await listen(plain);
    ports.ca = certs.certPath;
    // an OpenSSL CA folder: the certificate under its subject hash
    ports.caDir = join(certs.dir, 'capath');
    mkdirSync(ports.caDir);
    const hash = execFileSync('openssl', ['x509', '-hash', '-noout', '-in', certs.certPath], { encoding: 'utf8' }).trim();
    copyFileSync(certs.certPath, join(ports.caDir, `${hash}.0`));
    for (const v of VERSIONS) sources[v] = await netHttpSources(v);
  });

  after(async () => {
    await closeServer(good, conns);
    await closeServer(plain, conns);
    for (const s of Object.values(sources)) s.cleanup();
    certs.cleanup();
  });

  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}, both transports, as native MRI`, async (t) => {
      // each run binds its own local port (the last one's may be in TIME_WAIT)
      const run = async (f) => f(script({ ...ports, localPort: await freePort() }));
      const mri = await run(async (code) => JSON.parse((await runNative(`puts(begin\n${code}\nend)`, { load: [sources[version].dir] })).trim().split('\n').pop()));
      assert.equal(mri[0][0], 'ok');
      assert.equal(mri[0][1][0], null);
      assert.equal(mri[0][1][1], 'OpenSSL::X509::Certificate');
      assert.equal(mri[0][1][2], '/CN=localhost');
      assert.deepEqual(mri[1], ['ok', [null, mri[1][1][1]]]);
      assert.match(mri[2][1], /^secure GET \/capath/);
      assert.deepEqual(mri[4], ['ok', true]);
      assert.deepEqual(mri[5], ['ok', true]);
      assert.deepEqual(mri[6], ['SocketError', 'Failed to open TCP connection to <example>:2119 (open failure)']);
      assert.deepEqual(mri[7], ['ok', [false, 'secure GET /again0', true, 'secure GET /again1', 'OpenSSL::SSL::Session', 32, 0, true, true, true, false]]);
      assert.deepEqual(mri[8][1].slice(0, 5), [false, 'secure GET /raw', 'OpenSSL::SSL::Session', true, 'secure GET /raw']);

      // (null where the VM's fibers cannot parse certificates)
      const waiting = await onWaitingVM(t, version, (vm) => run((code) => rbJSON(vm, `JSON.parse(begin\n${code}\nend)`)));
      const thread = await bootThreadVM(version);
      let blocking;
      try {
        blocking = await run((code) => rbJSON(thread, `JSON.parse(begin\n${code}\nend)`));
      } finally {
        await thread.close();
      }
      // the servers answer with the client's port, which differs per run
      const mask = (r) => JSON.parse(JSON.stringify(r).replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:N'));
      if (waiting) assert.deepEqual(mask(waiting), mask(mri), 'waiting transport');
      assert.deepEqual(mask(blocking), mask(mri), 'blocking transport');
    });
  }
});
