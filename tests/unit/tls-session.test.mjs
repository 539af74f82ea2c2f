// sessionDer (js/ruby/transports/node-connect.mjs): the TLS session this
// Node hands over (Node 22.23, 24.17 and later wrap OpenSSL's DER with a
// header of their own) comes out as the DER MRI's OpenSSL::SSL::Session
// reads, and that DER alone resumes the session in this Node when it does not
// verify the server (with verification, the host resumes Node's own form:
// tests/rubywasm/tls-details.test.mjs). Run under each Node of CI (.ci/run).
import test from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { sessionDer } from '../../js/ruby/transports/node-connect.mjs';
import { makeCerts, haveOpenssl } from '../support/certs.mjs';

async function handshake(port, session) {
  const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false, session });
  let received = null;
  socket.on('session', (s) => (received = s));
  await once(socket, 'secureConnect');
  const reused = socket.isSessionReused();
  socket.resume();
  await once(socket, 'close');
  return { received, reused };
}

test('a session from this Node: its DER, read by MRI, resumes the session', { skip: !haveOpenssl() && 'no openssl' }, async (t) => {
  const certs = makeCerts();
  t.after(certs.cleanup);
  const server = tls.createServer({ key: certs.key, cert: certs.cert }, (s) => s.end('x'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const { port } = server.address();

  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    server.setSecureContext({ key: certs.key, cert: certs.cert, maxVersion });
    const first = await handshake(port);
    assert.ok(first.received, `${maxVersion}: a session arrived`);
    const der = sessionDer(first.received);
    assert.ok(der, `${maxVersion}: recognised (starts ${first.received.subarray(0, 24).toString('hex')})`);
    assert.equal(der[0], 0x30, 'a DER SEQUENCE');
    const again = await handshake(port, der);
    assert.equal(again.reused, true, `${maxVersion}: the DER alone resumes`);
    const ruby = spawnSync('ruby', ['-ropenssl', '-e', 's = OpenSSL::SSL::Session.new($stdin.binmode.read); print s.id.bytesize, " ", s.timeout'], { input: der, encoding: 'utf8', timeout: 30000 });
    if (ruby.error) continue; // no native Ruby here
    assert.equal(ruby.status, 0, ruby.stderr);
    assert.match(ruby.stdout, /^\d+ [1-9]\d*$/, `${maxVersion}: MRI reads the id and timeout`);
  }
});

test('sessionDer: what is not a session it knows is null', () => {
  assert.equal(sessionDer(Buffer.from('hello')), null);
  assert.equal(sessionDer(Buffer.from('\0nodejs:tls:session:1')), null, 'no end to the version');
  assert.equal(sessionDer(Buffer.from('\0nodejs:tls:session:1\0\0\x05ab')), null, 'name cut short');
  const der = Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]);
  const wrapped = Buffer.concat([Buffer.from('\0nodejs:tls:session:7\0\0\x02ab'), der]);
  assert.deepEqual(sessionDer(wrapped), der);
  assert.deepEqual(sessionDer(der), der);
});
