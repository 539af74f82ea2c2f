// http.rb (Debian's ruby-http 4.4.1) inside ruby.wasm. It reads responses
// with the http-parser gem (FFI bindings to a C parser), which cannot load
// there; the package's HttpParser (ruby/net_http_wasm/http_parser.rb) takes
// its place. First that stand-in against the gem itself: the same inputs,
// whole and cut at every point, through both, natively and in ruby.wasm
// 4.0 and 3.4, compared as http.rb sees them (the data of each callback,
// however cut into calls; the values; which error, and at which call).
// Then http.rb's
// requests, run by native MRI (with the real gem) and by ruby.wasm 4.0 and
// 3.4 over both Node transports, against the same local servers (in a child
// process, so that the blocking transport can reach them): what each prints
// is compared, exception classes and messages included.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRubyVM } from '../../js/ruby/node.mjs';
import { haveNativeRuby } from '../support/native-ruby.mjs';
import { makeCerts, haveOpenssl } from '../support/certs.mjs';
import { VERSIONS, fiberCertTrap } from '../support/rubywasm.mjs';

const TRANSPORTS = [['blocking', true], ['waiting', false]];
const VENDOR = '/usr/lib/ruby/vendor_ruby';
const GEMS = '/usr/share/rubygems-integration/all/gems';
// http.rb and what it loads: http-form-data, http-parser (the gem: natively
// only), addressable and public_suffix
const HTTPRB = [VENDOR, `${GEMS}/addressable-2.8.1`, `${GEMS}/public_suffix-4.0.6`];
const STAND_IN = new URL('../../ruby/net_http_wasm/http_parser.rb', import.meta.url).pathname;
const SEED = Number(process.env.NETHTTP_RANDOM_SEED || 1);

const skip = !haveNativeRuby()
  ? 'native ruby is not installed'
  : !haveOpenssl()
    ? 'openssl is not installed'
    : !existsSync(`${VENDOR}/http.rb`) || !existsSync(`${VENDOR}/http-parser.rb`) || !HTTPRB.every((d) => existsSync(d))
      ? 'not installed: apt-get install ruby-http'
      : false;

function native(code, args = []) {
  const r = spawnSync('ruby', ['-e', code, ...args], { encoding: 'utf8', timeout: 120000, maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`native ruby failed: ${r.stderr}`);
  return r.stdout;
}

// What the VM prints running code ($stdout captured).
async function inVM(vm, blocking, code) {
  const wrapped = `require 'stringio'\n__out = StringIO.new\n$stdout = __out\nbegin\n${code}\nensure\n$stdout = STDOUT\nend\n__out.string`;
  return blocking ? vm.eval(wrapped).toString() : (await vm.evalAsync(wrapped)).toString();
}

// got equals want, a line at a time: a difference names its line (the
// first), not the whole output.
function sameLines(got, want) {
  const g = got.split('\n');
  const w = want.split('\n');
  const i = w.findIndex((line, k) => line !== g[k]);
  if (i >= 0) assert.equal(`line ${i + 1}: ${g[i]}`, `line ${i + 1}: ${w[i]}`);
  assert.equal(g.length, w.length);
}

// ---- the stand-in against the gem ----

// Writes the inputs to ARGV[0] (JSON: [{ kind, chunks: [base64...] }]):
// responses plausible and hostile, each whole then at the end of the
// stream (""), cut at every point and byte by byte; then seeded mutations
// of them cut at random points. kind: which callbacks are set (below).
const CORPUS = `
require 'json'
W = [
  "HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nContent-Length: 5\\r\\n\\r\\nhello",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n3\\r\\nabc\\r\\n2;ext=1\\r\\nde\\r\\n0\\r\\nX-Trailer: t\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nA \\r\\n0123456789\\r\\n0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nConnection: close\\r\\n\\r\\nread to the end",
  "HTTP/1.0 200 OK\\r\\nConnection: keep-alive\\r\\nContent-Length: 2\\r\\n\\r\\nok",
  "HTTP/1.0 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nokHTTP/1.0 200 OK\\r\\n\\r\\n",
  "HTTP/1.1 204 No Content\\r\\nDate: x\\r\\n\\r\\n",
  "HTTP/1.1 304 Not Modified\\r\\nContent-Length: 10\\r\\n\\r\\n",
  "HTTP/1.1 100 Continue\\r\\n\\r\\nHTTP/1.1 200 OK\\r\\nContent-Length: 1\\r\\n\\r\\nx",
  "HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\nrest of it",
  "HTTP/1.1 200 OK\\r\\nUpgrade: h2c\\r\\nConnection: upgrade, keep-alive\\r\\nContent-Length: 3\\r\\n\\r\\nabc",
  "HTTP/1.1 200 OK\\r\\nConnection: keep-alive, close\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nConnection: Keep-Alive ,foo,  close \\r\\nContent-Length: 0\\r\\n\\r\\nxx",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 3\\r\\nContent-Length: 3\\r\\n\\r\\nabc",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 3 \\r\\n\\r\\nabc",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 3 4\\r\\n\\r\\nabc",
  "HTTP/1.1 200 OK\\r\\nContent-Length: abc\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 99999999999999999999\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip, chunked\\r\\n\\r\\n1\\r\\na\\r\\n0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: Chunked \\r\\n\\r\\n1\\r\\na\\r\\n0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n3\\r\\nabcX\\r\\n",
  "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n3\\nabc\\r\\n0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\nContent-Length: 2\\n\\nok",
  "HTTP/1.1 200 OK\\r\\nX-Folded: a\\r\\n  b\\r\\n\\tc\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nX-Empty:\\r\\nX-Spaces:   \\r\\nX-Empty-Fold:\\r\\n more\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nSet-Cookie: a=1\\r\\nset-cookie: b=2\\r\\nX-UTF8: Zo\\xC3\\xAB\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nX-Bad: a\\x01b\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nX-Bad: \\x7fb\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nBad Name: x\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nNoColon\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nX: a\\rb\\r\\n\\r\\n",
  "HTTP/1.1 200\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "HTTP/1.1 200 \\r\\n\\r\\n",
  "HTTP/1.1  200  Two  Spaces\\r\\n\\r\\n",
  "HTTP/1.1 2OO OK\\r\\n\\r\\n",
  "HTTP/1.1 1000 Big\\r\\n\\r\\n",
  "HTTP/2.0 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "HTTP/11 200 OK\\r\\n\\r\\n",
  "HXTP/1.1 200 OK\\r\\n\\r\\n",
  "http/1.1 200 OK\\r\\n\\r\\n",
  "\\r\\n\\r\\nHTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "garbage",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 10\\r\\n\\r\\nshort",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK\\r\\nContent-Length: 1\\r\\n\\r\\n!",
  "HTTP/1.1 200 OK\\r\\nConnection: close\\r\\nContent-Length: 1\\r\\n\\r\\n!HTTP/1.1",
  "HTTP/1.1 200 OK\\r\\nConnection: close\\r\\nContent-Length: 1\\r\\n\\r\\n!\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nProxy-Connection: close\\r\\nContent-Length: 0\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\nContent-Lengthx: 5\\r\\nConnectionx: close\\r\\nTransfer-Encodingx: chunked\\r\\n\\r\\nbody",
  "HTTP/1.1 200 OK\\r\\nX: " + "v" * 90000 + "\\r\\n\\r\\n",
  "HTTP/1.1 200 OK\\r\\n" + "X-Long: 12345678\\r\\n" * 5000 + "\\r\\n",
  "HTTP/1.1 200 OK\\r\\nContent-Length: 3\\r\\n\\r\\na\\x00\\xff",
].map(&:b)
cases = []
W.each_with_index do |w, wi|
  cases << { kind: 'plain', chunks: [w, ''] }
  if w.bytesize < 2000
    (1...w.bytesize).each { |i| cases << { kind: 'plain', chunks: [w[0, i], w[i..], ''] } }
    cases << { kind: 'plain', chunks: w.bytes.map(&:chr) + [''] }
  end
  %w[chunk stop raise].each { |k| cases << { kind: k, chunks: [w, ''] } } if wi < 14
end
cases << { kind: 'raise', chunks: ["HTTP/1.1 200 OK\\r\\nA: x\\r\\n\\r\\n", ''] }
rng = Random.new(Integer(ARGV[1]))
small = W.select { |w| w.bytesize < 2000 }
bits = ["\\r", "\\n", " ", "\\t", ":", ",", "0", "9", "a", "F", ";", "H", "\\x00", "\\x7f", "\\xff", "chunked", "close",
        "keep-alive", "Content-Length: ", "Transfer-Encoding: chunked\\r\\n", "Connection: ", "\\r\\n", "\\r\\n\\r\\n",
        "upgrade", "Upgrade: x\\r\\n"].map(&:b)
1500.times do
  w = small[rng.rand(small.size)].dup
  rng.rand(1..4).times do
    i = rng.rand(0..w.bytesize)
    bit = bits[rng.rand(bits.size)]
    case rng.rand(3)
    when 0 then w.insert(i, bit)
    when 1 then w[i, rng.rand(1..3)] = '' if i < w.bytesize
    else w[i, 1] = bit if i < w.bytesize
    end
  end
  cuts = Array.new(rng.rand(0..3)) { rng.rand(0..w.bytesize) }.sort.uniq
  parts = []
  last = 0
  cuts.each { |c| parts << w[last...c]; last = c }
  parts << w[last..]
  parts << '' if rng.rand < 0.7
  cases << { kind: %w[plain plain chunk stop][rng.rand(4)], chunks: parts }
end
File.write(ARGV[0], JSON.generate(cases.map { |c| { kind: c[:kind], chunks: c[:chunks].map { |s| [s].pack('m0') } } }))
`;

// Parses every case of CASES with HttpParser and prints, a line each, what
// http.rb can see of it: the callbacks in order, each run of data of one
// kind joined (the status, each field name, each value, the body: where
// the data is cut into calls is the parser's affair), whether all data
// came as binary Strings; which parse call failed, and with what error,
// or else the status, version, keep_alive? and upgrade? it ends with; then
// error? and the status after reset!. Data that a message still being read
// had given at its last callback is left out where it is not whole yet (a
// partial field, or a failed message's pieces: http.rb raises then). kind
// plain: an object's methods (as http.rb's parser), chunk: with
// on_chunk_header/complete too (the gem sets them in on_message_complete's
// place), stop: a block that stops at the headers (a HEAD response's body
// is skipped), raise: a block that raises.
const DRIVER = `
require 'json'
class Rec
  attr_reader :ev
  def initialize; @ev = []; @enc = true; end
  def add(kind, d = nil)
    @enc &&= d.nil? || d.encoding == Encoding::BINARY
    return if d && d.empty? && kind != :on_header_value
    last = @ev.last
    if d && last && last[0] == kind then last[1] += d
    else @ev << (d ? [kind, d.b] : [kind]) end
    0
  end
  def enc = @enc
  %i[on_message_begin on_headers_complete on_message_complete].each { |m| define_method(m) { |_| add(m) } }
  %i[on_status on_header_field on_header_value on_body].each { |m| define_method(m) { |_, d| add(m, d) } }
end
class RecChunk < Rec
  def on_chunk_header(_) = add(:on_chunk_header)
  def on_chunk_complete(_) = add(:on_chunk_complete)
end
HEAD_KINDS = %i[on_status on_header_field on_header_value]
JSON.parse(File.read(CASES)).each do |c|
  rec = c['kind'] == 'chunk' ? RecChunk.new : Rec.new
  inst = HttpParser::Parser.new_instance { |i| i.type = :response }
  pr = HttpParser::Parser.new(rec)
  pr.on_headers_complete { |i| rec.add(:stop); i.stop! } if c['kind'] == 'stop'
  pr.on_header_value { |_, d| raise 'boom' if d == 'x'; rec.add(:on_header_value, d) } if c['kind'] == 'raise'
  failed = c['chunks'].index { |s| pr.parse(inst, s.unpack1('m0')) }
  ev = rec.ev
  last = ev.rindex { |e| e.size == 1 } || -1
  tail = ev[last + 1..]
  ev = ev[0..last] + (failed ? [] : tail.reject { |e| HEAD_KINDS.include?(e[0]) })
  e = inst.error
  # (after an error, what the instance holds is not read)
  out = [ev, rec.enc, failed, e ? [e.class, e.message] : [inst.http_status, inst.http_version, inst.keep_alive?, inst.upgrade?]]
  inst.reset!
  out << [inst.error?, inst.http_status]
  p out
end
`;

describe('HttpParser (the http-parser gem in ruby.wasm) against the gem', { skip, timeout: 600000 }, () => {
  let dir;
  let cases;
  let gem;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nethttp-httpparser-'));
    cases = join(dir, 'cases.json');
    native(CORPUS, [cases, String(SEED)]);
    gem = native(`require 'http-parser'\nCASES = ${JSON.stringify(cases)}\n${DRIVER}`);
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  test('the gem is the oracle: its own FFI parser, with the expected answers', () => {
    const lines = gem.trimEnd().split('\n');
    assert.ok(lines.length > 3000, `${lines.length} cases`);
    assert.equal(native(`require 'http-parser'\nprint HttpParser::Parser.instance_method(:parse).source_location[0]`), `${VENDOR}/http-parser/parser.rb`);
    // the first case: a whole response, then the end of the stream
    assert.equal(lines[0], '[[[:on_message_begin], [:on_status, "OK"], [:on_header_field, "Content-Type"], [:on_header_value, "text/plain"], '
      + '[:on_header_field, "Content-Length"], [:on_header_value, "5"], [:on_headers_complete], [:on_body, "hello"], [:on_message_complete]], '
      + 'true, nil, [200, "1.1", true, false], [false, 0]]');
    assert.match(gem, /\[:on_body, "abcde"\], \[:on_header_field, "X-Trailer"\], \[:on_header_value, "t"\], \[:on_message_complete\]/);
    assert.match(gem, /HttpParser::Error::STRICT, "strict mode assertion failed \(STRICT\)"/);
    assert.match(gem, /HttpParser::Error::HEADER_OVERFLOW/);
  });

  test('natively: the same callbacks, data, values and errors for every case and cut', () => {
    const errors = 'p HttpParser::ERRORS.sort.map { |k, v| [k, v.name] }';
    assert.equal(native(`load ${JSON.stringify(STAND_IN)}\n${errors}`), native(`require 'http-parser'\n${errors}`));
    const ours = native(`load ${JSON.stringify(STAND_IN)}\nCASES = ${JSON.stringify(cases)}\n${DRIVER}`);
    sameLines(ours, gem);
  });

  for (const version of VERSIONS) {
    test(`in ruby.wasm ${version}: the same`, async () => {
      const box = await createRubyVM({ ruby: version, mounts: { [dir]: dir } });
      try {
        const got = await inVM(box.vm, false, `CASES = ${JSON.stringify(cases)}\n${DRIVER}`);
        sameLines(got, gem);
        // it reads responses only, as http.rb uses it
        const req = await inVM(box.vm, false, `
          begin
            HttpParser::Parser.new.parse(HttpParser::Parser.new_instance { |i| i.type = :request }, "GET / HTTP/1.1\\r\\n\\r\\n")
          rescue NotImplementedError => e
            p [e.class, e.message]
          end
          p require('http-parser')`);
        assert.equal(req, '[NotImplementedError, "net-http-wasm: HttpParser in ruby.wasm reads responses only (type = :response)"]\nfalse\n');
      } finally {
        await box.dispose();
      }
    });
  }
});

// ---- http.rb's requests ----

// The servers (one handler, over TCP and TLS): per path, an answer that says
// what it got and how many requests its connection has carried, or a
// response shaped for one case (chunked in three writes, read to EOF, cut
// short, malformed, never, late, a redirect, gzip, large, HEAD).
const SERVERS = `
import net from 'node:net';
import tls from 'node:tls';
import zlib from 'node:zlib';
import { readFileSync } from 'node:fs';
const handle = (s) => {
  let buf = Buffer.alloc(0);
  let served = 0;
  const next = () => {
    const i = buf.indexOf('\\r\\n\\r\\n');
    if (i < 0) return;
    const lines = buf.subarray(0, i).toString('latin1').split('\\r\\n');
    const [method, path] = lines[0].split(' ');
    const h = {};
    for (const l of lines.slice(1)) h[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const len = Number(h['content-length'] || 0);
    if (buf.length < i + 4 + len) return;
    const body = buf.subarray(i + 4, i + 4 + len).toString('latin1');
    buf = buf.subarray(i + 4 + len);
    served++;
    const close = /close/i.test(h.connection || '');
    const send = (status, headers, payload) => {
      const b = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'latin1');
      s.write('HTTP/1.1 ' + status + '\\r\\n' + headers + 'Content-Length: ' + b.length + '\\r\\n' + (close ? 'Connection: close\\r\\n' : '') + '\\r\\n');
      s.write(b);
      if (close) s.end();
    };
    const [route, query] = path.split('?');
    if (route === '/chunked') {
      s.write('HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n3\\r\\nabc\\r\\n');
      setTimeout(() => { s.write('4\\r\\ndefg\\r\\n'); setTimeout(() => s.write('0\\r\\nX-Trailer: t\\r\\n\\r\\n'), 30); }, 30);
    } else if (route === '/eof') {
      s.write('HTTP/1.1 200 OK\\r\\nx-lower-case: v\\r\\nMiXeD-Case: w\\r\\n\\r\\nread till the end');
      setTimeout(() => s.end(), 30);
    } else if (route === '/short') s.end('HTTP/1.1 200 OK\\r\\nContent-Length: 10\\r\\n\\r\\nshort');
    else if (route === '/bad') s.end('HTTP/1.1 2OO OK\\r\\n\\r\\n');
    else if (route === '/cut-head') s.end('HTTP/1.1 200 OK\\r\\nContent-Len');
    else if (route === '/silent') {}
    else if (route === '/late') setTimeout(() => send('200 OK', '', 'late'), 1500);
    else if (route === '/redirect') send('302 Found', 'Location: /target\\r\\n', '');
    else if (route === '/gzip') send('200 OK', 'Content-Encoding: gzip\\r\\n', zlib.gzipSync('inflated body, ' + 'x'.repeat(100)));
    else if (route === '/big') {
      let out = '';
      for (let j = 0; out.length < Number(query); j++) out += j + ',';
      send('200 OK', 'Content-Type: text/csv\\r\\n', out.slice(0, Number(query)));
    } else if (route === '/head') s.write('HTTP/1.1 200 OK\\r\\nContent-Length: 1234\\r\\n\\r\\n' + (method === 'HEAD' ? '' : 'x'.repeat(1234)));
    else send('200 OK', 'Content-Type: text/plain; charset=utf-8\\r\\nX-Served: ' + served + '\\r\\n',
      method + ' ' + path + ' #' + served + ' on this connection; body ' + JSON.stringify(body) + '; type ' + (h['content-type'] || '-') + '; ua ' + h['user-agent']);
    next();
  };
  s.on('data', (d) => { buf = Buffer.concat([buf, d]); next(); });
  s.on('error', () => {});
};
const servers = { http: net.createServer(handle), tls: tls.createServer({ key: readFileSync(process.env.KEY), cert: readFileSync(process.env.CERT) }, handle) };
servers.tls.on('tlsClientError', () => {});
const ports = {};
for (const [name, s] of Object.entries(servers)) {
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  ports[name] = s.address().port;
}
console.log(JSON.stringify(ports));
`;

// Each scenario prints with `p`; PORTS (the servers', and refused: one
// nothing listens on) and CA are set before it.
const PRELUDE = `
require 'http'
U = "http://127.0.0.1:#{PORTS['http']}"
def show(r) = [r.status.to_i, r.status.reason, r.version, r.headers.to_a.reject { |k, _| k == 'Date' }, r.to_s, r.to_s.encoding.to_s, r.content_type.mime_type, r.content_type.charset]
def err(e) = [e.class, e.message.gsub(/port \\d+/, 'port PORT').sub(/:\\d+ state/, ':PORT state')]
`;
const SCENARIOS = {
  'GET, and POST with a raw, a form and a JSON body': `
    p show(HTTP.get("#{U}/get?q=1"))
    p show(HTTP.post("#{U}/post", body: 'raw body'))
    p show(HTTP.post("#{U}/form", form: { a: 1, b: 'zoë' }))
    p show(HTTP.headers('X-A' => 'b').post("#{U}/json", json: { k: [1, 2] }))`,
  'HTTP.persistent: one connection for every request, a chunked one among them': `
    HTTP.persistent(U) do |h|
      p 3.times.map { |i| h.get("/k#{i}").to_s }
      p h.get('/chunked').to_s
      p h.get('/k3').to_s
    end`,
  'a chunked response in three writes, read as it comes': `
    r = HTTP.get("#{U}/chunked")
    p r.headers.to_a.reject { |k, _| k == 'Date' }
    body = []
    r.body.each { |c| body << c }
    p body.join, r.headers['X-Trailer']`,
  'read to the end of the stream, HEAD, a redirect, gzip, a large body': `
    p show(HTTP.get("#{U}/eof"))
    p show(HTTP.head("#{U}/head"))
    p show(HTTP.follow.get("#{U}/redirect"))
    p show(HTTP.use(:auto_inflate).get("#{U}/gzip"))
    s = HTTP.get("#{U}/big?300000").to_s
    p [s.bytesize, s[0, 20], s[-20..]]`,
  'a short body, a bad status line, a cut head, a refused connection': `
    [-> { HTTP.get("#{U}/short").to_s }, -> { HTTP.get("#{U}/bad") }, -> { HTTP.get("#{U}/cut-head") }, -> { HTTP.get("http://127.0.0.1:#{PORTS['refused']}/") }].each do |f|
      f.call
    rescue => e
      p err(e)
    end`,
  'HTTPS with a CA made at run time, one-off and persistent; without it': `
    ctx = OpenSSL::SSL::SSLContext.new
    ctx.set_params(ca_file: CA)
    p show(HTTP.get("https://localhost:#{PORTS['tls']}/tls", ssl_context: ctx))
    HTTP.persistent("https://localhost:#{PORTS['tls']}") { |h| p 2.times.map { |i| h.get("/t#{i}", ssl_context: ctx).to_s } }
    begin
      HTTP.get("https://localhost:#{PORTS['tls']}/tls")
    rescue => e
      p err(e)
    end`,
  // (per operation, connect and write default to 0.25 s: given room, as a
  // VM on a busy machine may take longer to connect)
  'timeouts: per operation, global, and a late answer within one': `
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    op = { connect: 5, write: 5 }
    [-> { HTTP.timeout(**op, read: 0.3).get("#{U}/silent") }, -> { HTTP.timeout(1).get("#{U}/silent") }, -> { HTTP.timeout(**op, read: 0.2).get("#{U}/late").to_s }].each do |f|
      f.call
    rescue => e
      p err(e)
    end
    p (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t).between?(1.45, 15)
    p HTTP.timeout(**op, read: 5).get("#{U}/late").to_s`,
};

function script(body, env) {
  return `require 'json'\n%i[PORTS CA U].each { |c| Object.send(:remove_const, c) if Object.const_defined?(c) }\nPORTS = JSON.parse(${JSON.stringify(env.PORTS)})\nCA = ${JSON.stringify(env.CA)}\n${PRELUDE}\n${body}\n`;
}

describe('http.rb in ruby.wasm, compared with native MRI', { skip, timeout: 600000 }, () => {
  let servers;
  let certs;
  let env;
  const expected = {};
  before(async () => {
    certs = makeCerts();
    servers = spawn(process.execPath, ['--input-type=module', '-e', SERVERS], {
      env: { ...process.env, KEY: `${certs.dir}/server.key`, CERT: certs.certPath },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = await once(servers.stdout, 'data');
    const ports = JSON.parse(String(line));
    // a port nothing listens on: taken and let go
    ports.refused = Number(native('require "socket"; s = TCPServer.new("127.0.0.1", 0); print s.addr[1]; s.close'));
    env = { PORTS: JSON.stringify(ports), CA: certs.certPath };
    for (const [name, body] of Object.entries(SCENARIOS)) expected[name] = native(script(body, env));
  });
  after(() => {
    servers?.kill();
    certs?.cleanup();
  });

  test('native MRI gives the expected answers (the oracle is sane)', () => {
    const all = Object.values(expected).join('');
    assert.match(expected['GET, and POST with a raw, a form and a JSON body'], /"POST \/form #1 on this connection; body \\"a=1&b=zo%C3%AB\\"/);
    assert.match(expected['HTTP.persistent: one connection for every request, a chunked one among them'], /GET \/k3 #5 on this connection/);
    assert.match(all, /\[HTTP::ConnectionError, "error reading from socket: Could not parse data"\]/);
    assert.match(all, /\[HTTP::ConnectionError, "failed to connect: Connection refused - connect\(2\) for \\"127.0.0.1\\" port PORT"\]/);
    assert.match(all, /\[OpenSSL::SSL::SSLError, "SSL_connect returned=1 errno=0 peeraddr=127.0.0.1:PORT state=error: certificate verify failed \(self-signed certificate\)"\]/);
    assert.match(all, /\[HTTP::TimeoutError, "Read timed out after 0.3 seconds"\]\n\[HTTP::TimeoutError, "Timed out after using the allocated 1 seconds"\]/);
    assert.doesNotMatch(all, /false\n"late"/);
  });

  for (const version of VERSIONS) {
    for (const [transport, blocking] of TRANSPORTS) {
      describe(`ruby.wasm ${version}, ${transport} transport`, () => {
        let box;
        before(async () => {
          box = await createRubyVM({ ruby: version, blocking, gems: HTTPRB, mounts: { [certs.dir]: certs.dir } });
        });
        after(() => box && box.dispose());
        for (const name of Object.keys(SCENARIOS)) {
          // (post_connection_check parses the peer's certificate)
          const skip = name.startsWith('HTTPS') && fiberCertTrap(version, blocking);
          test(name, { skip }, async () => {
            const got = await inVM(box.vm, blocking, script(SCENARIOS[name], env));
            assert.equal(got, expected[name]);
          });
        }
      });
    }
  }
});
