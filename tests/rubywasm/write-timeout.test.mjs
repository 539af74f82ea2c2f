// Net::HTTP#write_timeout inside ruby.wasm 4.0 and 3.4 (both Node
// transports), compared with native MRI running the net/http sources of the
// same version against the same servers: a large POST body to a server that
// never reads raises Net::WriteTimeout (through the codec and through
// net/http's own writing); to a server that starts reading late, but within
// write_timeout, the request goes through.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { VERSIONS, bootVM, bootThreadVM, rbJSON, runNative, listen, closeServer, haveNativeRuby } from '../support/browser/harness.mjs';
import { netHttpSources } from '../support/faults/index.mjs';

const skip = !haveNativeRuby() ? 'native ruby is not installed' : false;
const BODY_MIB = 32; // more than the loopback's socket buffers take

// Reads nothing for `delayMs` (forever when null), then reads the request
// and answers "ok" with the number of body bytes it got.
function lateReader(delayMs, sockets) {
  return net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.pause();
    if (delayMs == null) return;
    setTimeout(() => {
      // the head is collected; the body's bytes only counted (collecting
      // 32 MiB in 64 KiB pieces with Buffer.concat is quadratic)
      let head = Buffer.alloc(0);
      let left = null;
      let got = 0;
      socket.on('data', (c) => {
        if (left == null) {
          head = Buffer.concat([head, c]);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) return;
          left = Number(/content-length: *(\d+)/i.exec(head.subarray(0, end).toString('latin1'))[1]);
          c = head.subarray(end + 4);
          head = Buffer.alloc(0);
          got = 0;
        }
        got += c.length;
        left -= c.length;
        if (left <= 0) {
          const text = `ok ${got}`;
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${text.length}\r\n\r\n${text}`);
          left = null;
        }
      });
      socket.resume();
    }, delayMs);
  });
}

function script({ never, late, prompt }) {
  return `
    out = []
    body = 'x' * (${BODY_MIB} << 20)
    t = ->(&b) { t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC); r = begin; ['ok', b.call]; rescue Exception => e; [e.class.name, e.message]; end; out << r + [(Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0).round(1)] }
    post = ->(port, wt) { h = Net::HTTP.new('127.0.0.1', port); h.write_timeout = wt; h.read_timeout = 30; h.start { h.post('/', body).body } }
    # 0: a server that never reads
    t.() { post.(${never}, 1) }
    # 1: one that reads after 1.5 s, within write_timeout
    t.() { post.(${late}, 5) }
    # 2, 3: the same through net/http's own writing (not the codec)
    NetHttpWasm.codec = false if defined?(NetHttpWasm)
    t.() { post.(${never}, 1) }
    t.() { post.(${late}, 5) }
    # 4: how long the body takes to write here, to a server that reads at once
    t.() { post.(${prompt}, 60) }
    NetHttpWasm.codec = true if defined?(NetHttpWasm)
    # 5: the same through the codec
    t.() { post.(${prompt}, 60) }
    out.to_json
  `;
}

describe('write_timeout', { skip, timeout: 240000 }, () => {
  const sockets = new Set();
  let never;
  let late;
  let prompt;
  const ports = {};
  const sources = {};

  before(async () => {
    never = lateReader(null, sockets);
    late = lateReader(1500, sockets);
    prompt = lateReader(0, sockets);
    ports.never = await listen(never);
    ports.late = await listen(late);
    ports.prompt = await listen(prompt);
    for (const v of VERSIONS) sources[v] = await netHttpSources(v);
  });

  after(async () => {
    await closeServer(never, sockets);
    await closeServer(late, sockets);
    await closeServer(prompt, sockets);
    for (const s of Object.values(sources)) s.cleanup();
  });

  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}, both transports, as native MRI`, async () => {
      const code = script(ports);
      const mri = JSON.parse((await runNative(`puts(begin\n${code}\nend)`, { load: [sources[version].dir], timeout: 60000 })).trim().split('\n').pop());
      const checkShape = (r, who) => {
        assert.deepEqual(r[0].slice(0, 2), ['Net::WriteTimeout', 'Net::WriteTimeout with #<TCPSocket:(closed)>'], who);
        assert.deepEqual(r[2].slice(0, 2), r[0].slice(0, 2), who);
        for (const i of [1, 3, 4, 5]) {
          assert.equal(r[i][0], 'ok', `${who}, request ${i}: ${r[i].join(' ')}`);
          assert.equal(r[i][1], `ok ${BODY_MIB << 20}`, `${who}, request ${i}`);
        }
        // The times: the timeout fires after write_timeout (1 s) and not
        // before; the late reader's request waits for its delay (1.5 s). Nor
        // much later: the buffers are full, or the body written, within
        // about the time it takes to write it to a prompt reader here (4:
        // net/http's writing, 5: the codec's), which a loaded machine
        // stretches. The bound, write_timeout or the delay plus three times
        // that plus 5 s, stays well below the timeouts a
        // wrong wait would take (read_timeout 30 s, write_timeout's default 60 s).
        const bound = (wait, i) => wait + 3 * r[i < 2 ? 5 : 4][2] + 5;
        for (const i of [0, 2]) assert.ok(r[i][2] >= 1 && r[i][2] < bound(1, i), `${who}, request ${i}: ${r[i][2]} s (bound ${bound(1, i)} s)`);
        for (const i of [1, 3]) assert.ok(r[i][2] >= 1.4 && r[i][2] < bound(1.5, i), `${who}, request ${i}: ${r[i][2]} s (bound ${bound(1.5, i)} s)`);
      };
      checkShape(mri, 'native MRI');
      const vm = await bootVM(version);
      installNetHttp(vm);
      const waiting = await rbJSON(vm, `JSON.parse(begin\n${code}\nend)`);
      const thread = await bootThreadVM(version);
      let blocking;
      try {
        blocking = await rbJSON(thread, `JSON.parse(begin\n${code}\nend)`);
      } finally {
        await thread.close();
      }
      const same = (r) => r.map((c) => c.slice(0, 2));
      checkShape(waiting, 'waiting transport');
      checkShape(blocking, 'blocking transport');
      assert.deepEqual(same(waiting), same(mri), 'waiting transport');
      assert.deepEqual(same(blocking), same(mri), 'blocking transport');
    });
  }
});
