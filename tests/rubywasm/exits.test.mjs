// Requests that fail, time out and are retried, each a non-local exit (a
// raise, a retry, a return out of a block), made inside C methods' blocks
// nested three deep (Hash#each > Enumerator#each_with_index > Array#map >
// Array#map), round after round: ruby.wasm 3.4.1 keeps some memory at each
// such exit, and 60 rounds of this program trapped it ("memory access out
// of bounds") before; the VM lives and every request ends as it should. The
// VM runs in a worker, so that this thread's server answers while the
// blocking transport waits.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { VERSIONS, workerVM } from '../support/rubywasm.mjs';

const ROUNDS = 60;
let server;
let base;
let refused;

before(async () => {
  server = http.createServer((req, res) => {
    if (req.url.startsWith('/slow')) {
      const t = setTimeout(() => res.end('late'), 400);
      res.on('close', () => clearTimeout(t));
    } else if (req.url.startsWith('/drop')) req.socket.destroy();
    else if (req.url.startsWith('/bad')) req.socket.end('HTTP/1.1 200 OK\r\nbroken\r\n\r\n');
    else res.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  // a port nothing listens on
  const hole = net.createServer();
  await new Promise((resolve) => hole.listen(0, '127.0.0.1', resolve));
  refused = hole.address().port;
  await new Promise((resolve) => hole.close(resolve));
});

after(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});

const program = () => `
require 'net/http'
require 'json'
base = URI(${JSON.stringify(base)})
out = Hash.new(0)
${ROUNDS}.times do |round|
  { ok: '/ok', slow: '/slow', drop: '/drop', bad: '/bad', refused: nil }.each do |kind, path|
    [1, 2].each_with_index.map do |x, i|
      [x].map do
        begin
          if path
            Net::HTTP.start(base.host, base.port, read_timeout: 0.05, max_retries: 1) { |h| h.get("#{path}?#{round}") }
          else
            Net::HTTP.start('127.0.0.1', ${refused}, open_timeout: 1) { |h| h.get('/') }
          end
          out["#{kind} ok"] += 1
        rescue => e
          out["#{kind} #{e.class}"] += 1
        end
      end
    end
  end
end
out.to_json
`;

for (const version of VERSIONS) {
  for (const blocking of [false, true]) {
    test(`ruby.wasm ${version}, ${blocking ? 'blocking' : 'waiting'}: ${ROUNDS} rounds of requests that fail, time out and are retried inside nested C iterators`, { timeout: 300000 }, async () => {
      const vm = await workerVM({ ruby: version, blocking });
      try {
        const out = JSON.parse(await vm.run(program(), !blocking));
        const n = ROUNDS * 2;
        assert.deepEqual(out, {
          'ok ok': n,
          'slow Net::ReadTimeout': n,
          'drop EOFError': n,
          'bad Net::HTTPBadResponse': n,
          'refused Errno::ECONNREFUSED': n,
        });
      } finally {
        await vm.close();
      }
    });
  }
}
