// HTTPS from Net::HTTP inside ruby.wasm 4.0 and 3.4: TLS by node:tls, the
// settings from Net::HTTP (ca_file, cert_store, verify_mode,
// verify_hostname) or installNetHttp's { tls } option. The certificates are
// made with `openssl` at test time.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { VERSIONS, bootVM, rbJSON, listen, closeServer, makeCerts, haveOpenssl } from '../support/browser/harness.mjs';
import { fiberCertTrap } from '../support/rubywasm.mjs';

const skip = haveOpenssl() ? false : 'openssl is not installed';

describe('HTTPS through node:tls', { skip, timeout: 180000 }, () => {
  let certs;
  let good; // certificate for localhost and 127.0.0.1
  let other; // certificate for other.test only
  let silent; // accepts TCP, never answers the TLS handshake
  const conns = new Set();
  let goodPort;
  let otherPort;
  let silentPort;

  before(async () => {
    certs = makeCerts();
    const handler = (req, res) => {
      conns.add(req.socket);
      const body = [];
      req.on('data', (c) => body.push(c));
      req.on('end', () => {
        res.setHeader('Content-Type', 'text/plain');
        res.end(`secure ${req.method} ${req.url} ${Buffer.concat(body).toString()}`);
      });
    };
    good = https.createServer({ key: certs.key, cert: certs.cert }, handler);
    other = https.createServer({ key: certs.otherKey, cert: certs.otherCert }, handler);
    goodPort = await listen(good);
    otherPort = await listen(other);
    const sockets = new Set();
    silent = net.createServer((s) => {
      sockets.add(s); // accepts, and never answers the ClientHello
      s.on('error', () => {});
    });
    silent.sockets = sockets;
    silentPort = await listen(silent);
  });

  after(async () => {
    await closeServer(good, conns);
    await closeServer(other, conns);
    await closeServer(silent, silent.sockets);
    certs.cleanup();
  });

  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}`, async () => {
      const vm = await bootVM(version);
      installNetHttp(vm);
      const ca = certs.certPath; // a host path: Node reads it
      const r = await rbJSON(vm, `
        out = []
        t = ->(&b) { begin; out << [:ok, b.call]; rescue Exception => e; out << [e.class.name, e.message]; end }
        # 0: no trusted CA
        t.() { Net::HTTP.get(URI('https://127.0.0.1:${goodPort}/x')) }
        # 1: ca_file, keep-alive over TLS
        t.() {
          h = Net::HTTP.new('127.0.0.1', ${goodPort}); h.use_ssl = true; h.ca_file = ${JSON.stringify(ca)}
          h.start { [h.get('/a').body, h.post('/b', 'x=1').body, h.get('/c').body] }
        }
        # 2: by name (SNI), Net::HTTP.start with options
        t.() { Net::HTTP.start('localhost', ${goodPort}, use_ssl: true, ca_file: ${JSON.stringify(ca)}) { |h| h.get('/name').body } }
        # 3: verify_mode VERIFY_NONE
        t.() { Net::HTTP.start('127.0.0.1', ${goodPort}, use_ssl: true, verify_mode: OpenSSL::SSL::VERIFY_NONE) { |h| h.get('/none').body } }
        # 4: cert_store with add_file
        t.() {
          s = OpenSSL::X509::Store.new; s.add_file(${JSON.stringify(ca)})
          Net::HTTP.start('127.0.0.1', ${goodPort}, use_ssl: true, cert_store: s) { |h| h.get('/store').body }
        }
        # 5: cert_store with add_cert (a certificate made in Ruby from PEM text;
        # not where that can trap the VM: fiberCertTrap)
        t.() {
          next 'not run' if ${!!fiberCertTrap(version, false)}
          s = OpenSSL::X509::Store.new; s.add_cert(OpenSSL::X509::Certificate.new(${JSON.stringify(certs.cert.toString())}))
          Net::HTTP.start('127.0.0.1', ${goodPort}, use_ssl: true, cert_store: s) { |h| h.get('/cert').body }
        }
        # 6: a trusted certificate for another name
        t.() { Net::HTTP.start('127.0.0.1', ${otherPort}, use_ssl: true, ca_file: ${JSON.stringify(certs.otherCertPath)}) { |h| h.get('/').body } }
        # 7: the same with verify_hostname = false
        t.() {
          h = Net::HTTP.new('127.0.0.1', ${otherPort}); h.use_ssl = true; h.ca_file = ${JSON.stringify(certs.otherCertPath)}; h.verify_hostname = false
          h.start { h.get('/nohost').body }
        }
        # 8: a handshake that never finishes, open_timeout
        t.() { Net::HTTP.start('127.0.0.1', ${silentPort}, use_ssl: true, verify_mode: OpenSSL::SSL::VERIFY_NONE, open_timeout: 0.3) { |h| h.get('/').body } }
        # 9: http to an https port: the server answers with a TLS alert / 400, not HTTP
        t.() { Net::HTTP.start('127.0.0.1', ${goodPort}, read_timeout: 2) { |h| h.get('/plain').code } }
        out`);
      assert.equal(r[0][0], 'OpenSSL::SSL::SSLError');
      assert.equal(r[0][1], `SSL_connect returned=1 errno=0 peeraddr=127.0.0.1:${goodPort} state=error: certificate verify failed (self-signed certificate)`);
      assert.deepEqual(r[1], ['ok', ['secure GET /a ', 'secure POST /b x=1', 'secure GET /c ']]);
      assert.deepEqual(r[2], ['ok', 'secure GET /name ']);
      assert.deepEqual(r[3], ['ok', 'secure GET /none ']);
      assert.deepEqual(r[4], ['ok', 'secure GET /store ']);
      assert.deepEqual(r[5], ['ok', fiberCertTrap(version, false) ? 'not run' : 'secure GET /cert ']);
      assert.deepEqual(r[6], ['OpenSSL::SSL::SSLError', 'hostname "127.0.0.1" does not match the server certificate']);
      assert.deepEqual(r[7], ['ok', 'secure GET /nohost ']);
      assert.equal(r[8][0], 'Net::OpenTimeout');
      assert.ok(r[9][0] !== 'ok' || r[9][1] === '400', JSON.stringify(r[9]));
    });
  }

  test('installNetHttp({ tls: { ca } }) trusts extra certificates for every connection', async () => {
    const vm = await bootVM('4.0');
    installNetHttp(vm, { tls: { ca: certs.cert.toString() } });
    const r = await rbJSON(vm, `
      [Net::HTTP.get(URI('https://127.0.0.1:${goodPort}/opt')),
       Net::HTTP.get(URI('https://localhost:${goodPort}/opt2'))]`);
    assert.deepEqual(r, ['secure GET /opt ', 'secure GET /opt2 ']);
  });
});
