// The blocking transport (installNetHttp(vm, { blocking: true })): Net::HTTP
// waits as it does natively, with no fiber switch, so it runs from vm.eval,
// inside blocks of C-implemented iterators, and sees a connection the server
// closed while Ruby slept. The VM runs in a worker thread (vm-thread.mjs):
// the servers stay on this thread's event loop.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VERSIONS, bootThreadVM, rbJSON, captureServer } from './fixtures/browser/harness.mjs';

// 3 MiB that differ at every offset (a byte copied from the wrong place shows)
const BIG = Buffer.alloc(3 << 20);
for (let i = 0; i < BIG.length; i += 4) BIG.writeUInt32LE((i * 2654435761) >>> 0, i);

for (const version of VERSIONS) {
  describe(`blocking transport, ruby.wasm ${version}`, { timeout: 120000 }, () => {
    let vm;
    let srv;
    before(async () => {
      vm = await bootThreadVM(version);
      srv = await captureServer((req, conn, i, socket) => {
        const body = `${req.method} ${req.target} conn=${conn}`;
        if (req.target === '/idle') setTimeout(() => socket.end(), 50);
        if (req.target === '/boom') return 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n';
        if (req.target === '/big') {
          // written in pieces, so that the client's reads end at many places
          for (let off = 0; off < BIG.length; off += 100000) setTimeout(() => socket.write(BIG.subarray(off, off + 100000)), off / 100000);
          return `HTTP/1.1 200 OK\r\nContent-Length: ${BIG.length}\r\n\r\n`;
        }
        return `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      });
    });
    after(async () => {
      await srv.close();
      await vm.close();
    });

    test('requests from vm.eval inside Array#map and Hash#each blocks, raising and rescuing there', async () => {
      const r = await rbJSON(vm, `
        u = "http://127.0.0.1:${srv.port}"
        a = %w[/m1 /boom /m2].map do |path|
          begin
            Net::HTTP.get(URI(u + path))
          rescue => e
            e.class.name
          end
        end
        h = {}
        { 'x' => '/h1', 'y' => '/boom' }.each do |k, path|
          h[k] = begin
            Net::HTTP.get_response(URI(u + path)).code
          rescue => e
            e.class.name
          end
        end
        [a, h, Fiber.current.alive?, Thread.list.size, NetHttpWasm.blocking?]`);
      assert.deepEqual(r[0], ['GET /m1 conn=0', 'Net::HTTPHeaderSyntaxError', 'GET /m2 conn=2']);
      assert.deepEqual(r[1], { x: '200', y: 'Net::HTTPHeaderSyntaxError' });
      assert.deepEqual(r.slice(2), [true, 1, true]);
    });

    test('large bodies arrive whole, with the codec and with net/http reading them itself', async () => {
      const r = await rbJSON(vm, `
        require 'digest'
        out = []
        [true, false].each do |codec|
          NetHttpWasm.codec = codec
          Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
            2.times { b = h.get('/big').body; out << [b.bytesize, Digest::SHA256.hexdigest(b)] }
          end
        ensure
          NetHttpWasm.codec = true
        end
        out`);
      const want = [BIG.length, createHash('sha256').update(BIG).digest('hex')];
      assert.deepEqual(r, [want, want, want, want]);
    });

    test('a POST after the server closed the kept-alive connection during sleep goes on a new connection', async () => {
      const before = srv.conns.length;
      const r = await rbJSON(vm, `
        Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
          a = h.get('/idle').body
          sleep 0.3 # the server closes the connection meanwhile
          [a, h.post('/after', 'x=1').body]
        end`);
      assert.deepEqual(r, [`GET /idle conn=${before}`, `POST /after conn=${before + 1}`]);
      assert.equal(srv.conns[before].requests.length, 1, 'nothing was written to the closed connection');
    });
  });
}

test('the I/O thread does not hold the process: a script that used the blocking transport exits', { timeout: 60000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nhw-exit-'));
  const file = join(dir, 'exit.mjs');
  writeFileSync(
    file,
    `import { bootVM } from ${JSON.stringify(new URL('./fixtures/browser/harness.mjs', import.meta.url).href)};
    import { installNetHttp } from ${JSON.stringify(new URL('../js/ruby/node.mjs', import.meta.url).href)};
    const vm = await bootVM('4.0');
    const handle = installNetHttp(vm, { blocking: true });
    const r = vm.eval("require 'net/http'; begin; Net::HTTP.get(URI('http://127.0.0.1:1/')); rescue => e; e.class.name; end").toString();
    await handle.uninstall();
    console.log(r);`,
  );
  try {
    const out = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 50000 });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'Errno::ECONNREFUSED');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
