// Connections to a loopback address over the waiting transport: on Node a
// bare TCP handle read and written on its descriptor, whose node:net Socket
// is made only when Ruby waits for it on the event loop or needs the stream.
// The servers run in this thread, so that a poll right after a request
// always misses (the server cannot answer while Ruby runs): every way of
// waiting then has to make the stream and be woken by it. (The socket
// API's TCPSocket keeps node:net: TLS may start over it.)
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createRubyVM } from '../../js/ruby/node.mjs';
import { VERSIONS, rbJSON, listen, closeServer } from '../support/browser/harness.mjs';

// the connection's record in the bridge, from Ruby: its socket's kind now
const KIND = `def kind(io)
  c = NetHttpWasm.bridge[:conns].call(:get, io.id)
  c[:bare].to_s == 'null' ? 'net' : c[:_socket].to_s == 'null' ? 'bare' : 'bare+stream'
end`;

for (const version of VERSIONS) {
  describe(`loopback connections over the waiting transport, ruby.wasm ${version}`, { timeout: 120000 }, () => {
    let box;
    let web;
    const sockets = new Set();
    before(async () => {
      box = await createRubyVM({ ruby: version });
      web = http.createServer((req, res) => {
        let n = 0;
        req.on('data', (c) => (n += c.length));
        req.on('end', () => {
          const later = /^\/later/.test(req.url) ? 40 : 0;
          setTimeout(() => res.end(`${req.method} ${req.url} ${n}`), later);
          // (the server closes the kept-alive connection 10 ms after answering)
          if (req.url === '/bye') setTimeout(() => req.socket.destroy(), 10);
        });
      });
      web.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await listen(web);
    });
    after(async () => {
      await box?.dispose();
      await closeServer(web, sockets);
    });

    test('a request whose answer comes later than the poll makes the stream and is read, as is a first write the kernel does not take whole; the next requests on the connection too', async () => {
      const r = await rbJSON(
        box.vm,
        `${KIND}
        h = Net::HTTP.new('127.0.0.1', ${web.address().port})
        h.start
        io = h.instance_variable_get(:@socket).io
        out = [kind(io), h.get('/later/1').body, kind(io), h.get('/now').body, h.post('/later/2', 'x' * ${8 << 20}).body]
        h.finish
        # a first write larger than the kernel takes at once goes on through the stream
        h = Net::HTTP.new('127.0.0.1', ${web.address().port})
        h.start
        io = h.instance_variable_get(:@socket).io
        out += [kind(io), h.post('/now', 'x' * ${8 << 20}).body, kind(io)]
        h.finish
        out`,
      );
      assert.deepEqual(r, ['bare', 'GET /later/1 0', 'bare+stream', 'GET /now 0', `POST /later/2 ${8 << 20}`, 'bare', `POST /now ${8 << 20}`, 'bare+stream']);
    });

    test('a connect(2) that fails at once, or that the kernel refuses, raises the Errno MRI raises', async () => {
      // (Linux refuses a connection to the loopback net's broadcast address
      // with ENETUNREACH within connect(2); a closed port's refusal comes
      // with the handshake)
      const r = await rbJSON(
        box.vm,
        `[['127.255.255.255', 80], ['127.0.0.1', 1]].map do |h, p|
          Net::HTTP.get_response(h, '/', p)
        rescue SystemCallError => e
          e.class.name
        end`,
      );
      assert.deepEqual(r, ['Errno::ENETUNREACH', 'Errno::ECONNREFUSED']);
    });

    test('a kept-alive connection the server closed while Ruby slept: the next request goes on a new connection', async () => {
      const r = await rbJSON(
        box.vm,
        `h = Net::HTTP.new('127.0.0.1', ${web.address().port})
        h.start
        a = h.get('/bye').body
        first = h.instance_variable_get(:@socket).io.id
        sleep 0.05
        b = h.get('/b').body
        again = h.instance_variable_get(:@socket).io.id != first
        h.finish
        [a, b, again]`,
      );
      assert.deepEqual(r, ['GET /bye 0', 'GET /b 0', true]);
    });

    test('net/http reading the socket itself (codec off): read_nonblock, wait_readable and a large body each way', async () => {
      const raw = await createRubyVM({ ruby: version, codec: false });
      try {
        const r = await rbJSON(
          raw.vm,
          `${KIND}
          h = Net::HTTP.new('127.0.0.1', ${web.address().port})
          h.start
          io = h.instance_variable_get(:@socket).io
          out = [kind(io), h.get('/later/1').body, kind(io), h.post('/now', 'y' * ${8 << 20}).body, h.get('/later/2').body]
          h.finish
          out`,
        );
        assert.deepEqual(r, ['bare', 'GET /later/1 0', 'bare+stream', `POST /now ${8 << 20}`, 'GET /later/2 0']);
      } finally {
        await raw.dispose();
      }
    });
  });
}
