// Large response bodies in ruby.wasm, over both Node transports: a body of
// known size is read straight into one Ruby String (js/ruby/bridge.mjs
// body(), ruby/net_http_wasm/buffered_io.rb read_body_direct). These check
// what that path must keep as MRI has it: the bytes whatever the pieces they
// arrive in, the String's encoding, read_body into a String that holds
// bytes already or into a block, a HEAD with a large Content-Length on a
// kept-alive connection, a body cut short (ignore_eof on and off), a read
// timeout in the middle of a body, and fibers under NetHttpWasm::Scheduler.
// The same Ruby runs in native MRI when there is one, and must agree.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { VERSIONS, bootVM, bootThreadVM, rbJSON, captureServer, haveNativeRuby, runNative } from '../support/browser/harness.mjs';

// 1.5 MiB and 7 bytes that differ at every offset (a misplaced byte shows)
const BIG = Buffer.alloc((3 << 19) + 7);
for (let i = 0; i + 4 <= BIG.length; i += 4) BIG.writeUInt32LE((i * 2654435761) >>> 0, i);
const ASCII = Buffer.from('abcdefghij'.repeat(30000));
const CUT = 200000; // what /short and /stall send of their 500000 bytes
// the pieces /odd is written in, cycled, with a pause after some
const PIECES = [1, 4093, 65537, 100003, 7, 300000, 13];

const sha = (b) => createHash('sha256').update(b).digest('hex');

function respond(req, conn, i, socket) {
  const path = req.target;
  if (path === '/odd') {
    let off = 0;
    let k = 0;
    const step = () => {
      while (off < BIG.length) {
        const n = PIECES[k++ % PIECES.length];
        socket.write(BIG.subarray(off, off + n));
        off += n;
        if (k % 3 === 0) return void setTimeout(step, 2);
      }
    };
    setTimeout(step, 1);
    return `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${BIG.length}\r\n\r\n`;
  }
  if (path === '/ascii') {
    if (req.method === 'HEAD') return `HTTP/1.1 200 OK\r\nContent-Length: ${ASCII.length}\r\n\r\n`;
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${ASCII.length}\r\n\r\n`);
    socket.write(ASCII.subarray(0, 70000));
    return ASCII.subarray(70000);
  }
  if (path === '/short' || path === '/stall') {
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 500000\r\n\r\n`);
    socket.write(BIG.subarray(0, CUT));
    if (path === '/short') return 'close';
    setTimeout(() => socket.destroy(), 5000);
    return null;
  }
  return 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n';
}

// The cases, as JSON-able results (native MRI runs it too).
const CASES = `
require 'digest'
def nhw_body_cases(port)
  out = {}
  sha = ->(s) { Digest::SHA256.hexdigest(s) }
  Net::HTTP.start('127.0.0.1', port) do |h|
    b = h.get('/odd').body
    out['odd'] = [b.bytesize, sha.(b), b.encoding.name]
    b = h.get('/ascii').body
    out['ascii'] = [b.bytesize, sha.(b), b.encoding.name]
    dest = +'prefix'
    h.request(Net::HTTP::Get.new('/odd')) { |r| r.read_body(dest) }
    out['append'] = [dest.bytesize, sha.(dest), dest.encoding.name]
    n = 0
    d = Digest::SHA256.new
    h.request(Net::HTTP::Get.new('/odd')) { |r| r.read_body { |c| n += c.bytesize; d << c } }
    out['block'] = [n, d.hexdigest]
    r = h.head('/ascii')
    out['head'] = [r.body, r['content-length']]
    out['after_head'] = h.get('/ascii').body.bytesize
  end
  b = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/short")).body
  out['short'] = [b.bytesize, sha.(b)]
  out['short_strict'] = begin
    Net::HTTP.start('127.0.0.1', port) do |h|
      # (net-http 0.2, Ruby 3.1's, has no Net::HTTP#ignore_eof=)
      next 'no ignore_eof' unless h.respond_to?(:ignore_eof=)
      h.ignore_eof = false
      h.get('/short').body.bytesize
    end
  rescue => e
    e.class.name
  end
  # (a POST: net-http 0.2 retries a GET after a timeout, with a block too)
  dest = +''
  out['stall'] = begin
    Net::HTTP.start('127.0.0.1', port, read_timeout: 0.5) do |h|
      h.request(Net::HTTP::Post.new('/stall'), '') { |r| r.read_body(dest) }
    end
    'no error'
  rescue => e
    [e.class.name, dest.bytesize, sha.(dest)]
  end
  out
end
`;

const EXPECTED = {
  odd: [BIG.length, sha(BIG), 'ASCII-8BIT'],
  // an ASCII body appended to net/http's '' keeps its encoding
  ascii: [ASCII.length, sha(ASCII), 'UTF-8'],
  append: [BIG.length + 6, sha(Buffer.concat([Buffer.from('prefix'), BIG])), 'ASCII-8BIT'],
  block: [BIG.length, sha(BIG)],
  head: [null, String(ASCII.length)],
  after_head: ASCII.length,
  short: [CUT, sha(BIG.subarray(0, CUT))],
  short_strict: 'EOFError',
  stall: ['Net::ReadTimeout', CUT, sha(BIG.subarray(0, CUT))],
};

let nativeResults = null;

describe('large bodies in native MRI (the reference)', { skip: !haveNativeRuby() && 'no native ruby' }, () => {
  test('the cases as MRI reads them', async () => {
    const srv = await captureServer(respond);
    try {
      nativeResults = JSON.parse(await runNative(`${CASES}\nputs nhw_body_cases(${srv.port}).to_json`));
    } finally {
      await srv.close();
    }
    if (nativeResults.short_strict === 'no ignore_eof') nativeResults.short_strict = EXPECTED.short_strict;
    assert.deepEqual(nativeResults, EXPECTED);
  });
});

for (const version of VERSIONS) for (const blocking of [false, true]) {
  describe(`large bodies, ruby.wasm ${version}, ${blocking ? 'blocking' : 'waiting'} transport`, { timeout: 120000 }, () => {
    let vm;
    let srv;
    let direct = 0; // body bytes the bridge wrote straight into Ruby's Strings (waiting transport)
    before(async () => {
      srv = await captureServer(respond);
      if (blocking) vm = await bootThreadVM(version);
      else {
        vm = await bootVM(version);
        const { bridge } = installNetHttp(vm);
        for (const name of ['body', 'bodyNow']) {
          const f = bridge[name];
          bridge[name] = function (...a) {
            const r = f.apply(this, a);
            Promise.resolve(r).then((n) => (direct += Math.max(0, Number(n))));
            return r;
          };
        }
      }
    });
    after(async () => {
      await srv.close();
      if (blocking) await vm.close();
    });

    test('bytes, encoding, appending, blocks, HEAD, cut short, read timeout', async () => {
      const r = await rbJSON(vm, `require 'net/http'\n${CASES}\nnhw_body_cases(${srv.port})`);
      assert.deepEqual(r, EXPECTED);
      if (nativeResults) assert.deepEqual(r, nativeResults);
      // (the String destinations took their bodies straight from the bridge)
      if (!blocking) assert.ok(direct >= 2 * BIG.length + ASCII.length + 2 * CUT, `${direct} bytes written directly`);
      // the HEAD and the GET after it shared a connection with the rest
      assert.equal(srv.conns[0].requests.length, 6);
    });

    test('with the codec off, the same', async () => {
      const r = await rbJSON(vm, `NetHttpWasm.codec = false\nbegin\nnhw_body_cases(${srv.port})\nensure\nNetHttpWasm.codec = true\nend`);
      assert.deepEqual(r, EXPECTED);
    });

    // (NetHttpWasm::Scheduler is the blocking transport's)
    if (blocking) test('fibers under NetHttpWasm::Scheduler read large bodies side by side', async () => {
      const r = await rbJSON(vm, `
        out = []
        NetHttpWasm::Scheduler.run do
          4.times { |i| Fiber.schedule { b = Net::HTTP.get(URI("http://127.0.0.1:${srv.port}/#{i.even? ? 'odd' : 'ascii'}")); out << [i, b.bytesize, Digest::SHA256.hexdigest(b)] } }
        end
        out.sort`);
      assert.deepEqual(r, [0, 1, 2, 3].map((i) => [i, ...(i % 2 ? [ASCII.length, sha(ASCII)] : [BIG.length, sha(BIG)])]));
    });
  });
}
