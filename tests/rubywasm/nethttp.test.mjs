// Net::HTTP inside ruby.wasm 4.0 and 3.4 (installNetHttp, js/ruby/ +
// ruby/net_http_wasm/) against real servers on 127.0.0.1.
//
// The bytes on the wire are checked three ways: against the same VM with the
// codec off (net/http's own Ruby code of that very version writes them),
// against native MRI (Debian's Ruby 3.1, net-http 0.2.0; for 4.0 without the
// default Content-Type that net-http >= 0.7 no longer adds), and for
// responses the code, headers and body against native MRI reading the same
// bytes (3.1 keeps the wire Content-Length after decoding gzip; 3.4 and 4.0
// rewrite it to the decoded size).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { installNetHttp } from '../../js/ruby/node.mjs';
import {
  VERSIONS, bootVM, bootThreadVM, rb, rbJSON, captureServer, listen, closeServer, haveNativeRuby, runNative, blackholePort,
} from '../support/browser/harness.mjs';
import { PROFILE_OF, NET_HTTP_OF, RUBY_OF } from '../support/rubywasm.mjs';

const native = haveNativeRuby();

// ---- request bytes ----

// Each scenario is a Ruby lambda taking the port of its own capture server.
const REQUEST_SCENARIOS = `{
  'get' => ->(port) { Net::HTTP.get(URI("http://127.0.0.1:#{port}/a/b?x=1&y=%20z")) },
  'get_response' => ->(port) { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/resp")).code },
  'get_host_path' => ->(port) { Net::HTTP.get('127.0.0.1', '/hp', port) },
  'post_json' => ->(port) { Net::HTTP.post(URI("http://127.0.0.1:#{port}/j"), '{"a":1}', 'Content-Type' => 'application/json').code },
  'post_no_type' => ->(port) { Net::HTTP.post(URI("http://127.0.0.1:#{port}/raw"), 'raw body').code },
  'post_form' => ->(port) { Net::HTTP.post_form(URI("http://127.0.0.1:#{port}/form"), 'q' => 'a b', 'z' => "\\u00fc~*", 'list' => ['1', '2'], 'nil' => nil).code },
  'start_verbs' => ->(port) {
    Net::HTTP.start('127.0.0.1', port) do |h|
      h.get('/g', 'X-Trace' => 'abc', 'accept' => 'text/html')
      h.post('/p', 'a=1')
      h.put('/u', 'put body', 'Content-Type' => 'text/plain')
      h.delete('/d')
      h.head('/h')
      h.patch('/pa', '{}', 'content-type' => 'application/json')
      h.options('/o')
      h.request(Net::HTTP::Post.new('/f').tap { |r| r.set_form_data('a' => 'b c', 'd' => '&=') })
      r = Net::HTTP::Get.new('/multi')
      r.add_field('X-Multi', 'one')
      r.add_field('X-Multi', 'two')
      r['x-lower-case'] = 'v'
      h.request(r)
      r = Net::HTTP::Get.new('/auth')
      r.basic_auth('user', 'p@ss')
      r.range = 0..99
      h.request(r)
      r = Net::HTTP::Post.new('/sep')
      r.set_form_data({ 'a' => '1', 'b' => '2' }, ';')
      h.request(r).code
    end
  },
  'fields_set_directly' => ->(port) {
    Net::HTTP.start('127.0.0.1', port) do |h|
      r = Net::HTTP::Get.new('/direct')
      r.instance_variable_get(:@header)['x-number'] = [42]
      h.request(r).code
    end
  },
  'binary_body' => ->(port) {
    Net::HTTP.start('127.0.0.1', port) do |h|
      r = Net::HTTP::Post.new('/bin', 'Content-Type' => 'application/octet-stream')
      r.body = (0..255).map(&:chr).join.b * 3
      h.request(r).code
    end
  },
  'utf8_values' => ->(port) {
    Net::HTTP.start('127.0.0.1', port) do |h|
      r = Net::HTTP::Put.new('/u8')
      r['X-Name'] = 'Zoë ✓'
      r.body = 'héllo wörld'
      r.content_type = 'text/plain; charset=utf-8'
      h.request(r).code
    end
  },
  'generic_request' => ->(port) {
    Net::HTTP.start('127.0.0.1', port) do |h|
      h.request(Net::HTTPGenericRequest.new('PURGE', false, true, '/purge', 'X-Why' => 'stale')).code
      h.send_request('REPORT', '/rep', '<x/>', 'Content-Type' => 'text/xml').code
    end
  },
  'http_proxy' => ->(port) {
    Net::HTTP.new('origin.test', 8080, '127.0.0.1', port, 'user', 'pass').start do |h|
      h.get('/via-proxy?q=1').code
      h.post('/p', 'x=1').code
    end
  },
  'uri_headers' => ->(port) {
    Net::HTTP.start('127.0.0.1', port) do |h|
      h.request(Net::HTTP::Get.new(URI("http://127.0.0.1:#{port}/full?q=1"), 'Accept-Encoding' => 'identity')).code
    end
  },
}`;

const RUN_SCENARIOS = `
def __nhw_run(scenarios, ports)
  out = {}
  # Array#each, not Hash#each: see the note on C iterators in ruby/net_http_wasm.rb
  scenarios.keys.each do |name|
    out[name] = begin
      scenarios[name].(ports[name]).to_s
    rescue Exception => e
      "#{e.class}: #{e.message}"
    end
  end
  out
end
`;

// The capture servers answer every request "200 ok" (no body for HEAD).
function okResponder(req) {
  return req.method === 'HEAD' ? 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n' : 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
}

// Runs every scenario (run(portsJSON) → results), each against its own capture server.
async function captureAll(names, run) {
  const servers = {};
  for (const n of names) servers[n] = await captureServer(okResponder);
  try {
    const ports = Object.fromEntries(names.map((n) => [n, servers[n].port]));
    const results = await run(JSON.stringify(ports));
    const bytes = Object.fromEntries(names.map((n) => [n, samePort(servers[n].bytes(), servers[n].port)]));
    const conns = Object.fromEntries(names.map((n) => [n, servers[n].conns.length]));
    return { results, bytes, conns };
  } finally {
    for (const n of names) await servers[n].close();
  }
}

const SCENARIO_NAMES = [...REQUEST_SCENARIOS.matchAll(/^ {2}'([a-z_0-9]+)' =>/gm)].map((m) => m[1]);

let nativeRequests = null;
function nativeRequestBytes() {
  if (!nativeRequests)
    nativeRequests = captureAll(SCENARIO_NAMES, async (ports) =>
      JSON.parse(await runNative(`${RUN_SCENARIOS}\nputs __nhw_run(${REQUEST_SCENARIOS}, JSON.parse(${JSON.stringify(ports)})).to_json`)),
    );
  return nativeRequests;
}

// net-http >= 0.7 (Ruby 4.0) adds no Content-Type to a body that has none;
// 0.2.0 (the native 3.1) and 0.6.0 (3.4) add it right after Content-Length.
function withoutDefaultContentType(bytes) {
  const text = bytes.toString('latin1');
  return Buffer.from(
    text.replace(/(Content-Length: \d+\r\n)Content-Type: application\/x-www-form-urlencoded\r\n\r\n/g, '$1\r\n'),
    'latin1',
  );
}

// The servers' ports differ between runs.
function samePort(buf, port) {
  return Buffer.from(buf.toString('latin1').split(`127.0.0.1:${port}`).join('127.0.0.1:PORT'), 'latin1');
}

function show(b) {
  return JSON.stringify(b.toString('latin1'));
}

// ---- responses ----

const gzipBody = zlib.gzipSync(Buffer.from('hello gzip '.repeat(200)));
const deflateBody = zlib.deflateSync(Buffer.from('deflated text '.repeat(50)));
const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function chunked(buf, size) {
  const parts = [];
  for (let i = 0; i < buf.length; i += size) {
    const c = buf.subarray(i, i + size);
    parts.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

// path → raw response bytes (each on its own connection: Connection: close)
const RESPONSES = {
  '/chunked': Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\nx-a: 2\r\nConnection: close\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer-X: y\r\n\r\n'),
  '/gzip': Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipBody.length}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n`), gzipBody]),
  '/gzip-chunked': Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n'), chunked(gzipBody, 100)]),
  '/deflate': Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: ${deflateBody.length}\r\nConnection: close\r\n\r\n`), deflateBody]),
  '/eof-body': Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nread until the end'),
  '/no-content': Buffer.from('HTTP/1.1 204 No Content\r\nX-Empty: \r\nConnection: close\r\n\r\n'),
  '/not-modified': Buffer.from('HTTP/1.1 304 Not Modified\r\nETag: "x"\r\nConnection: close\r\n\r\n'),
  '/folded': Buffer.from('HTTP/1.1 200 Fine Thanks\r\nX-Folded: first\r\n  second\r\n\tthird\r\nX-Spaced :   padded   \r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc'),
  '/interim': Buffer.from('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 201 Created\r\nLocation: /x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'),
  '/binary': Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${allBytes.length * 4}\r\nConnection: close\r\n\r\n`), allBytes, allBytes, allBytes, allBytes]),
  '/no-reason': Buffer.from('HTTP/1.1 404\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'),
  '/http10': Buffer.from('HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\n1.0!'),
  '/short': Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly this'),
  '/lf-only': Buffer.from('HTTP/1.1 200 OK\nContent-Length: 2\nX-Lf: yes\nConnection: close\n\nok'),
  '/empty-chunked': Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n'),
};

// Ruby: fetches each path on its own connection, as JSON-able results.
const RESPONSE_FETCH = `
def __nhw_fetch(port, paths, method = 'GET')
  out = []
  paths.each do |path|
    out << begin
      res = Net::HTTP.start('127.0.0.1', port) do |h|
        req = Net::HTTPGenericRequest.new(method, false, method != 'HEAD', path)
        req['accept-encoding'] = 'gzip;q=1.0,deflate;q=0.6,identity;q=0.3'
        req.instance_variable_set(:@decode_content, true)
        h.request(req)
      end
      [path, res.class.name, res.code, res.message, res.http_version, res.to_hash, res.body && [res.body].pack('m0'), res.body&.encoding&.name]
    rescue Exception => e
      [path, "#{e.class}: #{e.message}"]
    end
  end
  out
end
`;

async function responseServer() {
  // every response is the last on its connection: the server closes after it
  return captureServer((req, conn, i, socket) => {
    let r = RESPONSES[req.target.replace(/^\/head/, '')];
    if (!r) r = Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    else if (req.method === 'HEAD') {
      const text = r.toString('latin1');
      r = Buffer.from(text.slice(0, text.indexOf('\r\n\r\n') + 4), 'latin1');
    }
    socket.end(r);
    return null;
  });
}

let nativeResponses = null;
function nativeResponseResults() {
  if (!nativeResponses)
    nativeResponses = (async () => {
      const srv = await responseServer();
      try {
        return JSON.parse(await runNative(`${RESPONSE_FETCH}\nputs __nhw_fetch(${srv.port}, ${JSON.stringify(Object.keys(RESPONSES))}).to_json`));
      } finally {
        await srv.close();
      }
    })();
  return nativeResponses;
}

// 3.1 keeps Content-Length as it came after decoding; 3.4 and 4.0 set it to
// the decoded size.
function adjustNative(entry) {
  const [path, cls, code, msg, ver, headers, body, enc] = entry;
  if (!headers) return entry;
  const h = JSON.parse(JSON.stringify(headers));
  if (body != null && h['content-length'] && RESPONSES[path].toString('latin1').match(/Content-Encoding: (gzip|deflate)/)) {
    h['content-length'] = [String(Buffer.from(body, 'base64').length)];
  }
  return [path, cls, code, msg, ver, h, body, enc];
}

// ---- the suites ----

// Each suite runs twice: with the waiting transport (this thread's event
// loop; Ruby in vm.evalAsync) and with the blocking one (the VM in a worker
// thread, Ruby in vm.eval, the servers here).
for (const version of VERSIONS) for (const blocking of [false, true]) {
  describe(`Net::HTTP in ruby.wasm ${version}${blocking ? ', blocking transport' : ''}`, { timeout: 240000 }, () => {
    let vm;
    let handle;
    const servers = [];
    const setBridge = (name, value) => (blocking ? vm.set(name, value) : (handle.bridge[name] = value));

    before(async () => {
      if (blocking) vm = await bootThreadVM(version);
      else {
        vm = await bootVM(version);
        handle = installNetHttp(vm);
      }
    });

    after(async () => {
      for (const s of servers) await s.close();
      if (blocking) await vm.close();
    });

    test('require "net/http" loads, without sockets or threads', async () => {
      const r = await rbJSON(vm, `
        [require('net/http'), Net::HTTP::VERSION, RUBY_VERSION, defined?(NetHttpWasm::Socket), NetHttpWasm.codec?, NetHttpWasm.profile]`);
      assert.equal(r[0], false); // installNetHttp loaded it
      assert.equal(r[1], NET_HTTP_OF[version]);
      assert.ok(r[2].startsWith(RUBY_OF[version]), r[2]);
      assert.equal(r[3], 'constant');
      assert.equal(r[4], true);
      assert.equal(r[5], PROFILE_OF[version]);
    });

    test('the Net::HTTP calls: get, get_response, post, post_form, start { verbs }, request with a block', async () => {
      const seen = [];
      const server = http.createServer((req, res) => {
        const body = [];
        req.on('data', (c) => body.push(c));
        req.on('end', () => {
          seen.push([req.method, req.url, Buffer.concat(body).toString()]);
          res.setHeader('Content-Type', 'text/plain');
          res.setHeader('X-Method', req.method);
          res.end(req.method === 'HEAD' ? undefined : `${req.method} ${req.url} ${Buffer.concat(body).toString()}`);
        });
      });
      const port = await listen(server);
      try {
        const r = await rbJSON(vm, `
          u = "http://127.0.0.1:${port}"
          out = []
          out << Net::HTTP.get(URI("#{u}/get"))
          res = Net::HTTP.get_response(URI("#{u}/resp"))
          out << [res.code, res.message, res['content-type'], res.body, res.class.name]
          out << Net::HTTP.post(URI("#{u}/post"), 'x=1', 'Content-Type' => 'text/plain').body
          out << Net::HTTP.post_form(URI("#{u}/form"), 'a' => 'b c', 'n' => ['1', '2']).body
          Net::HTTP.start('127.0.0.1', ${port}) do |h|
            out << h.get('/g').body
            out << h.post('/p', 'pb').body
            out << h.put('/u', 'ub').body
            out << h.delete('/d').body
            r = h.head('/h')
            out << [r.code, r.body, r['x-method']]
            out << h.request(Net::HTTP::Post.new('/f').tap { |q| q.set_form_data('a' => 'b c') }).body
            chunks = []
            h.request(Net::HTTP::Get.new('/block')) { |res| res.read_body { |c| chunks << c } }
            out << chunks.join
            out << h.request_get('/rg').body
          end
          out`);
        assert.deepEqual(r, [
          'GET /get ',
          ['200', 'OK', 'text/plain', 'GET /resp ', 'Net::HTTPOK'],
          'POST /post x=1',
          'POST /form a=b+c&n=1&n=2',
          'GET /g ',
          'POST /p pb',
          'PUT /u ub',
          'DELETE /d ',
          ['200', null, 'HEAD'],
          'POST /f a=b+c',
          'GET /block ',
          'GET /rg ',
        ]);
      } finally {
        await closeServer(server);
      }
    });

    test('keep-alive inside start: one connection for many requests; a new one after the server closes', async () => {
      const srv = await captureServer((req, conn, i, socket) => {
        const body = `${req.target} conn=${conn}`;
        if (req.target === '/close') {
          socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
          return null;
        }
        // after /idle the server drops the idle connection (100 ms later)
        if (req.target === '/idle') setTimeout(() => socket.end(), 100);
        return `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      });
      servers.push(srv);
      const r = await rbJSON(vm, `
        out = []
        kept = []
        Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
          5.times { |i| kept << h.get("/n#{i}"); out << kept.last.body }
        end
        # responses read earlier keep their own fields and bodies
        out + kept.map { |res| [res.to_hash, res.body, res.http_version, res.message] }`);
      assert.deepEqual(r.slice(0, 5), [0, 1, 2, 3, 4].map((i) => `/n${i} conn=0`), 'five requests in start share one connection');
      assert.deepEqual(r.slice(5), [0, 1, 2, 3, 4].map((i) => [{ 'content-length': ['10'] }, `/n${i} conn=0`, '1.1', 'OK']));
      const r2 = await rbJSON(vm, `
        out = []
        Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
          out << h.get('/a').body
          out << h.get('/close').body   # the server answers Connection: close
          out << h.get('/b').body       # so this opens a new connection
          out << h.get('/idle').body
          # blocking: Kernel#sleep (the I/O thread sees the close meanwhile);
          # waiting: sleep would stop the event loop, so a JS timer is awaited
          ${blocking ? 'sleep 0.4' : "JS.eval('return new Promise((r) => setTimeout(r, 400))').await"}
          out << h.get('/c').body       # the server closed the idle connection: a new one
          out << h.get('/d').body
        end
        out`);
      assert.deepEqual(r2, ['/a conn=1', '/close conn=1', '/b conn=2', '/idle conn=2', '/c conn=3', '/d conn=3']);
      assert.equal(srv.conns.length, 4);
    });

    test('request bytes: identical to net/http\'s own code in this VM (codec off) and to native MRI', async () => {
      const on = await captureAll(SCENARIO_NAMES, async (ports) => {
        return rbJSON(vm, `NetHttpWasm.codec = true\n${RUN_SCENARIOS}\n__nhw_run(${REQUEST_SCENARIOS}, JSON.parse(${JSON.stringify(ports)}))`);
      });
      const off = await captureAll(SCENARIO_NAMES, async (ports) => {
        try {
          return await rbJSON(vm, `NetHttpWasm.codec = false\n${RUN_SCENARIOS}\n__nhw_run(${REQUEST_SCENARIOS}, JSON.parse(${JSON.stringify(ports)}))`);
        } finally {
          await rb(vm, 'NetHttpWasm.codec = true');
        }
      });
      for (const name of SCENARIO_NAMES) {
        assert.match(on.results[name], /^(200|ok)$/, `${name}: ${on.results[name]}`);
        assert.equal(off.results[name], on.results[name], `${name} (codec off): ${off.results[name]}`);
        assert.ok(on.bytes[name].equals(off.bytes[name]), `${name}: codec ${show(on.bytes[name])}\n  net/http ${show(off.bytes[name])}`);
        assert.equal(on.conns[name], off.conns[name]);
      }
      if (native) {
        const nat = await nativeRequestBytes();
        for (const name of SCENARIO_NAMES) {
          assert.equal(nat.results[name], on.results[name], `native ${name}: ${nat.results[name]}`);
          const want = PROFILE_OF[version] !== '3.4' ? withoutDefaultContentType(nat.bytes[name]) : nat.bytes[name];
          assert.ok(on.bytes[name].equals(want), `${name}: ruby.wasm ${version} ${show(on.bytes[name])}\n  native MRI ${show(want)}`);
          assert.equal(on.conns[name], nat.conns[name]);
        }
      }
    });

    test('responses: code, message, headers and body as MRI reads them (chunked, gzip, deflate, 1xx, 204, 304, EOF-framed, HTTP/1.0)', async () => {
      const srv = await responseServer();
      servers.push(srv);
      const paths = Object.keys(RESPONSES);
      const ours = await rbJSON(vm, `NetHttpWasm.codec = true\n${RESPONSE_FETCH}\n__nhw_fetch(${srv.port}, ${JSON.stringify(paths)})`);
      // net/http's own reading in this VM, except content decoding (ruby.wasm's
      // zlib crashes there: see the oracle notes)
      const plain = paths.filter((p) => !/gzip|deflate/.test(p));
      const theirs = await rbJSON(vm, `NetHttpWasm.codec = false\n${RESPONSE_FETCH}\n__nhw_fetch(${srv.port}, ${JSON.stringify(plain)})`);
      await rb(vm, 'NetHttpWasm.codec = true');
      const same = (a, b, what) => {
        if (isDeepStrictEqual(a, b)) return;
        const diff = (a || []).map((x, i) => (isDeepStrictEqual(x, (b || [])[i]) ? null : `[${i}] ours ${JSON.stringify(x).slice(0, 300)} theirs ${JSON.stringify((b || [])[i]).slice(0, 300)}`)).filter(Boolean);
        assert.fail(`${what}: ${(a || []).length} vs ${(b || []).length} fields\n  ${diff.join('\n  ')}`);
      };
      for (const t of theirs) same(ours.find((o) => o[0] === t[0]), t, `${t[0]} against net/http ${version} in the VM`);
      if (native) {
        const nat = await nativeResponseResults();
        for (const n of nat) same(ours.find((o) => o[0] === n[0]), adjustNative(n), `${n[0]} against native MRI`);
      }
      // HEAD: no body read, whatever the length says
      const heads = await rbJSON(vm, `${RESPONSE_FETCH}\n__nhw_fetch(${srv.port}, ['/head/gzip', '/head/chunked'], 'HEAD').map { |r| r[1..3] + [r[6]] }`);
      assert.deepEqual(heads, [['Net::HTTPOK', '200', 'OK', null], ['Net::HTTPOK', '200', 'OK', null]]);
    });

    test('decode_content: Net::HTTP.get asks for gzip and gets the decoded body', async () => {
      const text = 'gzipped text '.repeat(1000);
      const server = http.createServer((req, res) => {
        res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('X-Accept-Encoding', req.headers['accept-encoding']);
        res.end(zlib.gzipSync(text));
      });
      const port = await listen(server);
      try {
        const r = await rbJSON(vm, `
          res = Net::HTTP.get_response(URI('http://127.0.0.1:${port}/'))
          [res.body == ${JSON.stringify(text)}, res['content-encoding'], res['content-length'], res['x-accept-encoding'], res.body.encoding.to_s]`);
        // an ASCII body appended to MRI's '' stays UTF-8, as in MRI
        assert.deepEqual(r, [true, null, String(text.length), 'gzip;q=1.0,deflate;q=0.6,identity;q=0.3', 'ASCII-8BIT']);
      } finally {
        await closeServer(server);
      }
    });

    test('binary bodies both ways, and 10 MiB responses (Content-Length and chunked) streamed with read_body', async () => {
      const big = Buffer.alloc(10 << 20);
      for (let i = 0; i < big.length; i += 4) big.writeUInt32LE((i * 2654435761) >>> 0, i);
      const bigSha = createHash('sha256').update(big).digest('hex');
      let uploaded = null;
      const server = http.createServer((req, res) => {
        const body = [];
        req.on('data', (c) => body.push(c));
        req.on('end', () => {
          if (req.url === '/echo') {
            uploaded = Buffer.concat(body);
            res.setHeader('Content-Type', 'application/octet-stream');
            res.end(uploaded);
          } else if (req.url === '/big') {
            res.setHeader('Content-Length', big.length);
            res.end(big);
          } else {
            // chunked, in uneven pieces
            let i = 0;
            const step = () => {
              while (i < big.length) {
                const n = Math.min(big.length - i, 65536 + (i % 7777));
                const ok = res.write(big.subarray(i, i + n));
                i += n;
                if (!ok) return void res.once('drain', step);
              }
              res.end();
            };
            step();
          }
        });
      });
      const port = await listen(server);
      try {
        const r = await rbJSON(vm, `
          require 'digest'
          all = (0..255).map(&:chr).join.b
          out = []
          Net::HTTP.start('127.0.0.1', ${port}) do |h|
            res = h.post('/echo', all * 64, 'Content-Type' => 'application/octet-stream')
            out << (res.body == all * 64) << res.body.bytesize
            res = h.get('/big')
            out << res.body.bytesize << Digest::SHA256.hexdigest(res.body)
            n = 0
            chunks = 0
            sha = Digest::SHA256.new
            h.request(Net::HTTP::Get.new('/big-chunked')) do |res|
              res.read_body { |c| n += c.bytesize; chunks += 1; sha << c }
            end
            out << n << sha.hexdigest << (chunks > 1)
          end
          out`);
        assert.deepEqual(r, [true, 256 * 64, big.length, bigSha, big.length, bigSha, true]);
        assert.ok(uploaded.equals(Buffer.concat(Array(64).fill(allBytes))));
      } finally {
        await closeServer(server);
      }
    });

    test('strictResponses: a smuggling-shaped response is read as MRI reads it, or refused', async () => {
      const srv = await captureServer((req) => {
        if (req.target === '/smuggle') return 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n';
        return 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
      });
      servers.push(srv);
      const code = `
        out = []
        %w[/smuggle /fine].each do |path|
          begin
            out << [:ok, Net::HTTP.get(URI("http://127.0.0.1:${srv.port}#{path}"))]
          rescue Net::HTTPBadResponse => e
            out << [e.class.name, e.message]
          end
        end
        out`;
      assert.deepEqual(await rbJSON(vm, code), [['ok', 'hello'], ['ok', 'ok']]);
      await setBridge('strictResponses', true);
      try {
        assert.deepEqual(await rbJSON(vm, code), [
          ['Net::HTTPBadResponse', 'Transfer-Encoding with Content-Length (strict)'],
          ['ok', 'ok'],
        ]);
      } finally {
        await setBridge('strictResponses', false);
      }
    });

    test('errors: ECONNREFUSED, EOFError, Net::HTTPBadResponse, Net::ReadTimeout, SocketError, Net::OpenTimeout', async () => {
      const srv = await captureServer((req, conn, i, s) => {
        if (req.target === '/bad') return 'garbage\r\n\r\n';
        if (req.target === '/bad-header') return 'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n';
        if (req.target.startsWith('/eof')) return 'close';
        if (req.target === '/slow') return null;
        return 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
      });
      servers.push(srv);
      const free = await captureServer();
      const closedPort = free.port;
      await free.close();
      const hole = await blackholePort();
      try {
        const code = `
          out = []
          t = ->(&b) { begin; r = b.call; out << [:ok, r.to_s]; rescue Exception => e; out << [e.class.name, e.message]; end }
          t.() { Net::HTTP.get(URI("http://127.0.0.1:${closedPort}/")) }
          t.() { Net::HTTP.get(URI("http://127.0.0.1:${srv.port}/bad")) }
          t.() { Net::HTTP.get(URI("http://127.0.0.1:${srv.port}/bad-header")) }
          t.() { Net::HTTP.get(URI("http://127.0.0.1:${srv.port}/eof")) }
          t.() { Net::HTTP.start('127.0.0.1', ${srv.port}) { |h| h.post('/eof-post', 'x') } }
          t.() { Net::HTTP.start('127.0.0.1', ${srv.port}, read_timeout: 0.3) { |h| h.get('/slow') } }
          t.() { Net::HTTP.get(URI('http://nonexistent.invalid/')) }
          t.() { Net::HTTP.start('127.0.0.1', ${hole.port}, open_timeout: 0.3) { |h| h.get('/') } }
          t.() { Net::HTTP.get(URI("http://127.0.0.1:${srv.port}/after")) }
          out`;
        const r = await rbJSON(vm, code);
        const cls = r.map((x) => x[0]);
        assert.deepEqual(cls, [
          'Errno::ECONNREFUSED', 'Net::HTTPBadResponse', 'Net::HTTPBadResponse', 'EOFError', 'EOFError',
          'Net::ReadTimeout', version === '3.2' ? 'SocketError' : 'Socket::ResolutionError', // (Ruby >= 3.3)
          'Net::OpenTimeout', 'ok',
        ]);
        assert.equal(r[0][1], `Failed to open TCP connection to 127.0.0.1:${closedPort} (Connection refused - connect(2) for "127.0.0.1" port ${closedPort})`);
        assert.equal(r[1][1], 'wrong status line: "garbage"');
        assert.equal(r[2][1], 'wrong header line format');
        assert.equal(r[3][1], 'end of file reached');
        assert.match(r[5][1], /^Net::ReadTimeout with #<TCPSocket:/);
        assert.equal(r[6][1], 'Failed to open TCP connection to nonexistent.invalid:80 (getaddrinfo(3): Name or service not known)');
        assert.equal(r[7][1], PROFILE_OF[version] !== '3.4'
          ? `Failed to open TCP connection to 127.0.0.1:${hole.port} (Connection timed out - user specified timeout)`
          : 'execution expired');
        // the idempotent GET was retried once on a fresh connection (as MRI does)
        const eofConns = srv.conns.filter((c) => c.requests.some((q) => q.target === '/eof'));
        assert.equal(eofConns.length, 2);
        if (native) {
          // the same failures in native MRI: same classes (3.1 has no
          // Socket::ResolutionError) and, where 3.1 words them the same, messages
          const nat = JSON.parse(await runNative(`${code.replace('out\n', '')}\nputs out.to_json`));
          assert.deepEqual(nat.map((x) => x[0]), cls.map((c) => (c === 'Socket::ResolutionError' ? 'SocketError' : c)));
          // (not ECONNREFUSED's: Debian's net-http 0.2.0 connects with
          // Socket.tcp, which words it "connect(2) for 127.0.0.1:port")
          for (const i of [1, 2, 3, 4]) assert.equal(r[i][1], nat[i][1]);
        }
      } finally {
        hole.close();
      }
    });

    test("Net::HTTP.start's options: the writers net/http's own start calls, in its order, with its values and errors", async () => {
      // a subclass that logs its writers and opens nothing (#start); each
      // call made through the package's start and through net/http's own
      const r = await rbJSON(vm, `
        log = []
        klass = Class.new(Net::HTTP) do
          define_method(:start) { |&b| b ? b.call(self) : self }
          %i[read_timeout= open_timeout= write_timeout= max_retries= use_ssl= verify_mode= ipaddr= keep_alive_timeout=].each do |w|
            define_method(w) { |v| log << [w, v]; super(v) }
          end
          define_method(:extra=) { |v| log << [:extra=, v] }
          define_method(:guarded=) { |v| log << [:guarded=, v] }
          protected :guarded=
          define_method(:hidden=) { |v| log << [:hidden=, v] }
          private :hidden=
        end
        like_hash = Object.new
        def like_hash.to_hash = { read_timeout: 9 }
        calls = [
          ['h.example', 80, { read_timeout: 3, open_timeout: 4, 'write_timeout' => 5, foo: 1, :'a-b' => 2, guarded: 6, hidden: 7, extra: 8 }],
          ['h.example', nil, { use_ssl: true, verify_mode: 0, ipaddr: '10.0.0.1', keep_alive_timeout: 1 }],
          ['h.example', { use_ssl: true }],
          ['h.example', 8080, 'proxy.example', 3128, { max_retries: 2, write_timeout: nil }],
          ['h.example', 80, { max_retries: -1 }],
          ['h.example', 80, nil, nil, nil, nil, {}],
          ['h.example', 80, like_hash],
          ['h.example', 80],
          ['h.example', 80, { use_ssl: false }],
          ['h.example', 80, { guarded: 1, foo: 2 }],
          ['h.example', 80, { hidden: 1, 'read_timeout' => 2 }],
          ['h.example', 80, { max_retries: 'x' }],
        ]
        # (an object with a writer of its own: found only among its methods)
        solo = Class.new(klass) do
          define_singleton_method(:new) { |*a| super(*a).tap { |h| h.define_singleton_method(:solo=) { |v| log << [:solo=, v] } } }
        end
        solo_calls = [['h.example', 80, { solo: 1 }], ['h.example', 80, { solo: 1, read_timeout: 2 }]]
        state = ->(h) { [h.address, h.port, h.proxy_address, h.proxy_port, h.proxy_from_env?, h.use_ssl?, h.verify_mode, h.ipaddr, h.read_timeout, h.open_timeout, h.write_timeout, h.max_retries, h.keep_alive_timeout] }
        run = lambda do |f|
          log.clear
          v = begin
            f.call { |h| state.(h) }
          rescue => e
            [e.class.name, e.message]
          end
          [v, log.dup]
        end
        own = NetHttpWasm::HTTPStart::NET_HTTP_START
        {
          'replaced' => Net::HTTP.method(:start).source_location[0].end_with?('patches.rb'),
          'ours' => calls.map { |args| run.(->(&b) { klass.start(*args, &b) }) },
          'net_http' => calls.map { |args| run.(->(&b) { own.bind_call(klass, *args, &b) }) },
          'solo' => solo_calls.map { |args| run.(->(&b) { solo.start(*args, &b) }) },
          'solo_net_http' => solo_calls.map { |args| run.(->(&b) { own.bind_call(solo, *args, &b) }) },
        }`);
      assert.equal(r.replaced, true);
      assert.deepEqual(r.ours, r.net_http);
      // (what the calls did, as net/http's own start does it)
      assert.deepEqual([...r.net_http[0][1]].sort(), [['extra=', 8], ['guarded=', 6], ['open_timeout=', 4], ['read_timeout=', 3]]);
      assert.equal(r.net_http[1][0][1], 443);
      assert.equal(r.net_http[1][0][6], 0);
      assert.deepEqual(r.net_http[4][0][0], 'ArgumentError');
      assert.equal(r.net_http[6][0][8], 9);
      assert.deepEqual(r.net_http.slice(8).map((c) => c[1]), [[['use_ssl=', false]], [['guarded=', 1]], [], [['max_retries=', 'x']]]);
      assert.deepEqual(r.solo, r.solo_net_http);
      assert.deepEqual(r.solo_net_http[0][1], [['solo=', 1]]);
    });

    test('no thread is used, and Net::HTTP outside evalAsync says where it must run', { skip: blocking && 'blocking: vm.eval is where it runs' }, async () => {
      const r = vm.eval(`
        begin
          Net::HTTP.get(URI('http://127.0.0.1:9/'))
        rescue => e
          e.class.name + ': ' + e.message.lines.first.to_s
        end`).toString();
      assert.match(r, /evalAsync/);
      const threads = await rb(vm, 'Thread.list.size');
      assert.equal(threads, '1');
    });
  });
}
