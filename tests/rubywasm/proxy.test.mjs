// HTTPS through a CONNECT proxy from Net::HTTP inside ruby.wasm 4.0 and 3.4
// (both Node transports), compared with native MRI running the net/http
// sources of the same ruby.wasm version against the same proxy and TLS
// server: the answers, the error classes and messages (a 407, a CONNECT the
// proxy cannot make, a proxy that refuses connections, a certificate for
// another name behind the tunnel) and the requests the proxy saw.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { VERSIONS, bootVM, bootThreadVM, rbJSON, runNative, listen, closeServer, makeCerts, haveOpenssl, haveNativeRuby } from '../support/browser/harness.mjs';
import { netHttpSources } from '../support/faults/index.mjs';
import { startConnectProxy } from '../support/proxy/server.mjs';

const skip = !haveOpenssl() ? 'openssl is not installed' : !haveNativeRuby() ? 'native ruby is not installed' : false;

// Each case's [class, message] or [:ok, value]; the last value is JSON.
function script({ proxyPort, authPort, goodPort, otherPort, closedPort, ca }) {
  return `
    out = []
    t = ->(&b) { begin; out << ['ok', b.call]; rescue Exception => e; out << [e.class.name, e.message]; end }
    ca = ${JSON.stringify(ca)}
    # 0: through the proxy, keep-alive: GET, POST, GET over one tunnel
    t.() {
      h = Net::HTTP.new('localhost', ${goodPort}, '127.0.0.1', ${proxyPort}); h.use_ssl = true; h.ca_file = ca
      h.start { [h.get('/a').body, h.post('/b', 'x=1').body, h.get('/c').body, h.proxy?] }
    }
    # 1: by IP address (no SNI), Net::HTTP.start with the proxy arguments
    t.() { Net::HTTP.start('127.0.0.1', ${goodPort}, '127.0.0.1', ${proxyPort}, use_ssl: true, ca_file: ca) { |h| h.get('/ip').body } }
    # 2: a proxy that wants credentials, none given: 407
    t.() { Net::HTTP.start('localhost', ${goodPort}, '127.0.0.1', ${authPort}, use_ssl: true, ca_file: ca) { |h| h.get('/x').body } }
    # 3: wrong credentials
    t.() { Net::HTTP.start('localhost', ${goodPort}, '127.0.0.1', ${authPort}, 'u', 'bad', use_ssl: true, ca_file: ca) { |h| h.get('/x').body } }
    # 4: the right credentials
    t.() { Net::HTTP.start('localhost', ${goodPort}, '127.0.0.1', ${authPort}, 'u', 'p:w', use_ssl: true, ca_file: ca) { |h| h.get('/auth').body } }
    # 5: the proxy cannot reach the server: 502
    t.() { Net::HTTP.start('localhost', ${closedPort}, '127.0.0.1', ${proxyPort}, use_ssl: true, ca_file: ca) { |h| h.get('/x').body } }
    # 6: the proxy itself refuses the connection
    t.() { Net::HTTP.start('localhost', ${goodPort}, '127.0.0.1', ${closedPort}, use_ssl: true, ca_file: ca) { |h| h.get('/x').body } }
    # 7: behind the tunnel, a certificate for another name
    t.() { Net::HTTP.start('localhost', ${otherPort}, '127.0.0.1', ${proxyPort}, use_ssl: true, ca_file: ca) { |h| h.get('/x').body } }
    # 8: behind the tunnel, an untrusted certificate
    t.() { Net::HTTP.start('localhost', ${goodPort}, '127.0.0.1', ${proxyPort}, use_ssl: true) { |h| h.get('/x').body } }
    # 9: ipaddr: CONNECT to the address, Host and the certificate check for the name
    t.() {
      h = Net::HTTP.new('localhost', ${goodPort}, '127.0.0.1', ${proxyPort}); h.use_ssl = true; h.ca_file = ca; h.ipaddr = '127.0.0.1'
      h.start { h.get('/ipaddr').body }
    }
    # 10: the 407 response as the exception carries it
    t.() {
      begin
        Net::HTTP.start('localhost', ${goodPort}, '127.0.0.1', ${authPort}, use_ssl: true, ca_file: ca) { }
      rescue Net::HTTPClientException => e
        [e.response.class.name, e.response.code, e.response['proxy-authenticate']]
      end
    }
    out.to_json
  `;
}

describe('HTTPS through a CONNECT proxy', { skip, timeout: 240000 }, () => {
  let certs;
  let good;
  let other;
  let proxy;
  let authProxy;
  const conns = new Set();
  const ports = {};
  const sources = {};

  before(async () => {
    certs = makeCerts();
    const handler = (req, res) => {
      conns.add(req.socket);
      const body = [];
      req.on('data', (c) => body.push(c));
      req.on('end', () => res.end(`secure ${req.method} ${req.url} ${req.headers.host} ${Buffer.concat(body)}`));
    };
    good = https.createServer({ key: certs.key, cert: certs.cert }, handler);
    other = https.createServer({ key: certs.otherKey, cert: certs.otherCert }, handler);
    ports.goodPort = await listen(good);
    ports.otherPort = await listen(other);
    proxy = await startConnectProxy();
    authProxy = await startConnectProxy({ auth: 'u:p:w' });
    ports.proxyPort = proxy.port;
    ports.authPort = authProxy.port;
    const closed = net.createServer();
    ports.closedPort = await listen(closed);
    await new Promise((r) => closed.close(r));
    ports.ca = certs.certPath;
    for (const v of VERSIONS) sources[v] = await netHttpSources(v);
  });

  after(async () => {
    await closeServer(good, conns);
    await closeServer(other, conns);
    await proxy.close();
    await authProxy.close();
    for (const s of Object.values(sources)) s.cleanup();
    certs.cleanup();
  });

  // the result and what the proxies saw, from one run
  async function observe(run) {
    proxy.requests.length = 0;
    authProxy.requests.length = 0;
    const result = await run(script(ports));
    return { result, seen: [...proxy.requests], seenAuth: [...authProxy.requests] };
  }

  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}, both transports, as native MRI`, async () => {
      const mri = await observe(async (code) => JSON.parse((await runNative(`puts(begin\n${code}\nend)`, { load: [sources[version].dir] })).trim().split('\n').pop()));
      const r = mri.result;
      if (process.env.SHOW) console.error(JSON.stringify(mri, null, 1));
      assert.deepEqual(r[0], ['ok', [`secure GET /a localhost:${ports.goodPort} `, `secure POST /b localhost:${ports.goodPort} x=1`, `secure GET /c localhost:${ports.goodPort} `, true]]);
      assert.equal(r[2][0], 'Net::HTTPClientException');
      assert.equal(r[2][1], '407 "Proxy Authentication Required"');
      assert.equal(r[5][0], 'Net::HTTPFatalError');
      assert.equal(r[6][0], 'Errno::ECONNREFUSED');
      assert.equal(r[7][0], 'OpenSSL::SSL::SSLError');
      assert.equal(mri.seen.filter((s) => s.startsWith('CONNECT')).length, mri.seen.length);

      const vm = await bootVM(version);
      installNetHttp(vm);
      const waiting = await observe((code) => rbJSON(vm, `JSON.parse(begin\n${code}\nend)`));
      const thread = await bootThreadVM(version);
      let blocking;
      try {
        blocking = await observe((code) => rbJSON(thread, `JSON.parse(begin\n${code}\nend)`));
      } finally {
        await thread.close();
      }
      for (const [name, got] of [['waiting', waiting], ['blocking', blocking]]) {
        assert.deepEqual(got, mri, `${name} transport`);
      }
    });
  }
});
