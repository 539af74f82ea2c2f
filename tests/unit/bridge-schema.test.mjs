// The bridge's calls are declared once (schema/bridge.mjs `calls`): the
// Bridge has each of them with the arguments declared, and every call the
// Ruby side makes names a declared one with as many arguments as it takes,
// through call_wait exactly when it may wait. The Strings of several values
// (`lines`) are written and read by the generated code on both sides alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { calls, tlsSettings, lines, lists } from '../../schema/bridge.mjs';
import { Bridge } from '../../js/ruby/bridge.mjs';
import * as bridgeConstants from '../../js/ruby/constants.mjs';

const { WAITING_CALLS } = bridgeConstants;

const root = new URL('../../ruby/', import.meta.url);
const rubyFiles = readdirSync(root, { recursive: true }).filter((f) => f.endsWith('.rb'));

// `[x]` may be left out; `...x` takes any number more
function arity(args) {
  const required = args.filter((a) => !a.startsWith('[') && !a.startsWith('...')).length;
  return { required, most: args.some((a) => a.startsWith('...')) ? Infinity : args.length };
}

// The bridge calls in a Ruby source: [file:line, how, name, argument count
// (Infinity with a splat)].
function rubyCalls(file, text) {
  const out = [];
  const re = /\b(call|call_wait|call_wait_or_now)\('([A-Za-z]+)'/g;
  for (let m; (m = re.exec(text)); ) {
    // the arguments after the name, up to the closing parenthesis
    let depth = 1;
    let i = m.index + m[0].length;
    let args = 0;
    let splat = false;
    let sawAny = false;
    for (; i < text.length && depth > 0; i++) {
      const ch = text[i];
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      else if (ch === ')' || ch === ']' || ch === '}') depth--;
      else if (ch === ',' && depth === 1) {
        args++;
        sawAny = true;
        if (/^\s*\*[a-z]/.test(text.slice(i + 1))) splat = true;
      }
    }
    assert.ok(depth === 0, `${file}: unbalanced call of ${m[2]}`);
    const line = text.slice(0, m.index).split('\n').length;
    out.push([`${file}:${line}`, m[1], m[2], splat ? Infinity : sawAny ? args : 0]);
  }
  return out;
}

test('every declared call is a Bridge method taking the arguments declared', () => {
  for (const [name, spec] of Object.entries(calls)) {
    assert.equal(typeof Bridge.prototype[name], 'function', `Bridge#${name}`);
    assert.equal(Bridge.prototype[name].length, arity(spec.args).required, `Bridge#${name}: required arguments`);
  }
});

test('the calls that may wait are generated from the declaration', () => {
  assert.deepEqual([...WAITING_CALLS].sort(), Object.keys(calls).filter((k) => calls[k].waits).sort());
});

test('every bridge call of the Ruby side is declared, with a count of arguments it takes', () => {
  const seen = new Set();
  let n = 0;
  for (const f of rubyFiles) {
    for (const [where, how, name, count] of rubyCalls(f, readFileSync(new URL(f, root), 'utf8'))) {
      n++;
      const spec = calls[name];
      assert.ok(spec, `${where}: ${name} is not a declared bridge call`);
      seen.add(name);
      const { required, most } = arity(spec.args);
      if (count !== Infinity) assert.ok(count >= required && count <= most, `${where}: ${name} takes ${required}..${most} arguments, given ${count}`);
      // waiting calls go through call_wait (which awaits or defers them)
      if (how === 'call') assert.ok(!spec.waits, `${where}: ${name} may wait: call it through call_wait`);
      else assert.ok(spec.waits, `${where}: ${name} does not wait: call it directly`);
    }
  }
  assert.ok(n > 20, `only ${n} calls found`);
  // (deferred is made with the name of a waiting call)
  const unused = Object.keys(calls).filter((k) => !seen.has(k));
  assert.deepEqual(unused, [], 'declared calls the Ruby side never makes');
});

// The keys of TLS settings a source writes (Ruby: h['key'] and 'key' =>
// in the files that build them) or reads (JS: settings.key).
const keysIn = (text, re) => new Set([...text.matchAll(re)].map((m) => m[1]));

test('the TLS settings are declared once: Ruby writes only declared keys, the transports read only those, every key both', () => {
  const written = new Set();
  for (const f of ['net_http_wasm/tls.rb', 'net_http_wasm/ssl_socket.rb', 'net_http_wasm/patches.rb']) {
    const text = readFileSync(new URL(f, root), 'utf8');
    for (const k of keysIn(text, /h\['(\w+)'\]/g)) written.add(k);
    for (const k of keysIn(text, /'(\w+)' =>/g)) written.add(k);
  }
  const transports = new URL('../../js/ruby/transports/', import.meta.url);
  const read = new Set();
  for (const f of readdirSync(transports)) for (const k of keysIn(readFileSync(new URL(f, transports), 'utf8'), /\bsettings\.(\w+)/g)) read.add(k);
  const declared = Object.keys(tlsSettings);
  for (const k of written) assert.ok(declared.includes(k), `the Ruby side writes TLS setting ${k}, not declared`);
  for (const k of read) assert.ok(declared.includes(k), `a transport reads TLS setting ${k}, not declared`);
  assert.deepEqual(declared.filter((k) => !written.has(k)), [], 'declared TLS settings the Ruby side never writes');
  assert.deepEqual(declared.filter((k) => !read.has(k)), [], 'declared TLS settings no transport reads');
});

test('open and starttls take declared TLS settings as they are, and refuse others with an ArgumentError naming them', () => {
  const specs = [];
  const transport = {
    open: (_bridge, spec) => (specs.push(spec), bridgeConstants.failureLines({ kind: 'errno', detail: 'ECONNREFUSED' })),
    upgrade: (_bridge, _conn, spec) => (specs.push(spec), bridgeConstants.failureLines({ kind: 'errno', detail: 'ECONNRESET' })),
    blocking: true,
  };
  const bridge = new Bridge({ buffer: new ArrayBuffer(0) }, { profile: '4.0', wasmCodec: null }, transport);
  const good = { verify: true, ca: ['PEM'], caFiles: [], caDirs: ['/etc/ssl/certs'], defaultPaths: false, servername: 'example.test', minVersion: 'TLSv1.2' };
  assert.equal(bridge.open('example.test', 443, JSON.stringify(good), 1000, null, false), '!errno\nECONNREFUSED');
  assert.deepEqual(specs[0].tls, good);
  assert.equal(bridge.open('example.test', 443, JSON.stringify({ verify: true, sessionTicket: 'x' }), 1000, null, false), '!ArgumentError\nsessionTicket is not a TLS setting');
  assert.equal(bridge.open('example.test', 443, JSON.stringify({ verify: 'yes' }), 1000, null, false), '!ArgumentError\nTLS setting verify: a boolean, not "yes"');
  assert.equal(bridge.open('example.test', 443, JSON.stringify({ ca: ['PEM', 1] }), 1000, null, false), '!ArgumentError\nTLS setting ca: a string[], not ["PEM",1]');
  assert.equal(specs.length, 1, 'refused settings never reach the transport');
  // starttls over an open connection
  bridge.conns.set(7, { closed: false, peer: { host: 'example.test', port: 443 }, close() {} });
  assert.equal(bridge.starttls(7, JSON.stringify({ verify: false, servername: 'proxy.test' }), -1), '!errno\nECONNRESET');
  assert.deepEqual(specs[1].tls, { verify: false, servername: 'proxy.test' });
  bridge.conns.set(8, { closed: false, peer: { host: 'example.test', port: 443 }, close() {} });
  assert.equal(bridge.starttls(8, JSON.stringify({ verfy: false }), -1), '!ArgumentError\nverfy is not a TLS setting');
});

// Values of each of schema/bridge.mjs `lines`, as the two sides write
// them: one of each shape (values left out at the end, empty ones, a
// nested one, lines in a rest).
const SAMPLES = {
  failure: [
    { kind: 'Errno::ECONNRESET', detail: '' },
    { kind: 'ssl', detail: 'SSL_connect returned=1 errno=0 peeraddr=127.0.0.1:443 state=error: certificate verify failed' },
    { kind: 'IOError', detail: 'two\nlines' },
    { kind: 'IOError' },
  ],
  local: [{ host: '127.0.0.1', port: 0 }, { host: '', port: 8080 }],
  open: [
    { id: 3, family: 'AF_INET', address: '127.0.0.1', port: 40000 },
    { id: 4, family: 'AF_INET6', address: '::1', port: 1, reused: true, cert: '' },
    {
      id: 5, family: 'AF_INET', address: '10.0.0.2', port: 2, reused: false, cert: 'MIIBAA==',
      check: { peer: '[::1]:443', chain: 'QQ==,Qg==', nameOk: true, trusted: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----' },
    },
  ],
  upgraded: [{ reused: false, cert: 'MIIBAA==' }, { reused: true, cert: '', check: { peer: '127.0.0.1:8443', chain: '', nameOk: false, trusted: '' } }],
  peerCheck: [{ peer: '127.0.0.1:443', chain: 'QQ==', nameOk: false, trusted: 'a\nb\nc' }],
  listening: [{ id: 9, family: 'AF_INET', address: '0.0.0.0', port: 33000 }],
  accepted: [{ id: 10, family: 'AF_INET6', address: '::1', port: 33000, peerAddress: '::1', peerPort: 51000 }],
  settled: [
    { token: 7, failed: false, value: '0' },
    { token: 12, failed: false, value: '!IOError\nclosed stream' },
    { token: 3, failed: false, value: '' },
    { token: 5, failed: true, value: 'ReferenceError: setImmediate is not defined' },
  ],
  evaluation: [
    { token: 1, code: 'nil' },
    { token: 42, code: "require 'net/http'\nNet::HTTP.get(URI('http://127.0.0.1:8080/'))\n" },
    { token: 3, code: '' },
  ],
};
const cap = (s) => s[0].toUpperCase() + s.slice(1);
const snake = (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
// a sample as read back: every declared field, undefined where left out
const full = (name, v) =>
  Object.fromEntries(lines[name].fields.map(([f, type]) => [f, v[f] !== undefined && lines[type] ? full(type, v[f]) : v[f]]));

test('every declared lines format has samples here', () => {
  assert.deepEqual(Object.keys(SAMPLES).sort(), Object.keys(lines).sort());
});

test('lines: the generated JS writer and reader agree, and a value left out ends the String', () => {
  for (const [name, samples] of Object.entries(SAMPLES)) {
    for (const v of samples) {
      const s = bridgeConstants[`${name}Lines`](v);
      assert.equal(typeof s, 'string');
      assert.deepEqual(bridgeConstants[`read${cap(name)}Lines`](s), full(name, v), `${name}: ${JSON.stringify(s)}`);
    }
  }
  assert.equal(bridgeConstants.openLines({ id: 3, family: 'AF_INET', address: '127.0.0.1', port: 40000 }), '3\nAF_INET\n127.0.0.1\n40000');
  assert.equal(bridgeConstants.failureLines({ kind: 'timeout', detail: '' }), 'timeout\n');
});

test("lines: Ruby's generated Structs read what JS writes and write it back byte for byte (Debian's ruby)", () => {
  const written = Object.entries(SAMPLES).flatMap(([name, samples]) => samples.map((v) => [name, bridgeConstants[`${name}Lines`](v)]));
  const program = `
require 'json'
require ${JSON.stringify(fileURLToPath(new URL('net_http_wasm/constants.rb', root)))}
deep = ->(v) { v.is_a?(Struct) ? v.to_h.transform_values(&deep) : v }
out = JSON.parse($stdin.read).map do |name, s|
  klass = NetHttpWasm::Lines.const_get(name[0].upcase + name[1..])
  v = klass.read(s)
  [deep.(v), v.to_s]
end
print JSON.generate(out)`;
  const r = spawnSync('ruby', ['-e', program], { input: JSON.stringify(written), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  written.forEach(([name, s], i) => {
    const [values, back] = out[i];
    assert.equal(back, s, `${name}: Ruby wrote back another String`);
    // the same values under Ruby's names (nil for what was left out)
    const expect = (n, v) => Object.fromEntries(lines[n].fields.map(([f, type]) => [snake(f), v[f] === undefined ? null : lines[type] ? expect(type, v[f]) : v[f]]));
    const sample = SAMPLES[name][written.slice(0, i).filter(([n]) => n === name).length];
    assert.deepEqual(values, expect(name, sample), `${name}: ${JSON.stringify(s)}`);
  });
});

// Values of each of schema/bridge.mjs `lists`: none, one, several.
const LIST_SAMPLES = {
  settled: [
    [],
    [{ token: 1, failed: false, value: '5' }],
    [{ token: 2, failed: false, value: 'a\nb' }, { token: 3, failed: true, value: 'TypeError: x' }, { token: 40, failed: false, value: '!timeout\n' }],
  ],
  addresses: [[], ['127.0.0.1'], ['::1', '127.0.0.1', '10.0.0.7']],
};

test('every declared list has samples here', () => {
  assert.deepEqual(Object.keys(LIST_SAMPLES).sort(), Object.keys(lists).sort());
});

test("lists: JS writes them, JS and Ruby (Debian's) read the same items", () => {
  const read = (name, v) => (lists[name].item === 'text' ? v : full(lists[name].item, v));
  const written = [];
  for (const [name, samples] of Object.entries(LIST_SAMPLES)) {
    for (const items of samples) {
      const s = bridgeConstants[`${name}List`](items);
      assert.deepEqual(bridgeConstants[`read${cap(name)}List`](s), items.map((v) => read(name, v)), `${name}: ${JSON.stringify(s)}`);
      written.push([name, s, items]);
    }
  }
  assert.equal(bridgeConstants.settledList([{ token: 1, failed: false, value: 'x' }, { token: 2, failed: true, value: 'y' }]), '1\n0\nx\u00002\n1\ny');
  const program = `
require 'json'
require ${JSON.stringify(fileURLToPath(new URL('net_http_wasm/constants.rb', root)))}
out = JSON.parse($stdin.read).map do |name, s|
  NetHttpWasm::Lines.send("read_#{name}_list", s).map { |v| v.is_a?(Struct) ? v.to_h : v }
end
print JSON.generate(out)`;
  const r = spawnSync('ruby', ['-e', program], { input: JSON.stringify(written.map(([n, s]) => [n, s])), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  JSON.parse(r.stdout).forEach((items, i) => {
    const [name, s, sample] = written[i];
    const expect = sample.map((v) => (lists[name].item === 'text' ? v : Object.fromEntries(lines[lists[name].item].fields.map(([f]) => [snake(f), v[f]]))));
    assert.deepEqual(items, expect, `${name}: ${JSON.stringify(s)}`);
  });
});

// Responses whose head records (schema/bridge.mjs headRecord) the module
// writes: a field given twice and an empty one, HTTP/1.0, no message, bytes
// above 0x7f, and a gzip body whose fields change once it is decoded (R_END).
const HEADS = [
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nX-Empty:\r\nSet-Cookie: b=2\r\nVia: 1\r\nVia: 2\r\nVia: 3\r\nContent-Length: 2\r\n\r\nhi',
  'HTTP/1.0 404 Not Found\r\nServer: x\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 204\r\nDate: Mon, 30 Nov 2026 00:00:00 GMT\r\n\r\n',
  'HTTP/1.1 200 Caf\xc3\xa9\r\nX-Bin: \xff\xfe bytes\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 23\r\nX-After: 1\r\n\r\n',
];

// [head record, R_END's fields record or null] of a response, as the bridge
// gets them, and what the codec's own parser reads of it: [head, final
// head after decoding], each { version, code, message, fields } with the
// bytes as one char a byte.
async function headRecords(text) {
  const { ResponseParser } = await import('../../js/index.mjs');
  const { gzipSync } = await import('node:zlib');
  let bytes = Buffer.from(text, 'latin1');
  if (text.includes('gzip')) bytes = Buffer.concat([bytes, gzipSync(Buffer.from('hello hello hello hello'), { level: 9 })]);
  const lengthFixed = text.includes('gzip') ? Buffer.from(bytes.toString('latin1').replace('Content-Length: 23', `Content-Length: ${bytes.length - text.length}`), 'latin1') : bytes;
  const latin1 = (u8) => Buffer.from(u8).toString('latin1');
  const records = new ResponseParser({ bridgeRecords: true, decodeContent: true }).feed(lengthFixed);
  const head = records.find((e) => e.type === 'head').record;
  const end = records.find((e) => e.type === 'end').fields;
  // (the head as read_new reads it, before decoding; the decoding parser's
  // response takes the fields after decoding once its body is read)
  const asRead = new ResponseParser().feed(lengthFixed);
  const parsed = new ResponseParser({ decodeContent: true }).feed(lengthFixed);
  const view = (res) => ({
    version: res.httpVersion ?? '',
    code: res.code,
    message: res.message == null ? '' : latin1(res.messageBytes),
    fields: res.rawHeaderEntries().map(([n, vs]) => [latin1(n), vs.map(latin1)]),
  });
  const first = asRead.find((e) => e.type === 'head').response;
  const final = parsed.find((e) => e.type === 'end').response;
  return { head: [head[0], latin1(head.subarray(1))], end: end ? latin1(end) : null, want: view(first), wantFinal: end ? view(final) : null };
}

test('head records: what the module writes, the generated JS reader reads as the codec reads the response', async () => {
  for (const text of HEADS) {
    const { head, end, want, wantFinal } = await headRecords(text);
    assert.deepEqual(bridgeConstants.readHeadRecord(head[1]), want, JSON.stringify(text));
    if (text.includes('gzip')) {
      assert.ok(end, 'a decoded body: the fields after decoding come with R_END');
      assert.deepEqual(bridgeConstants.readHeadRecord(end, true).fields, wantFinal.fields);
      assert.ok(!wantFinal.fields.some(([n]) => n === 'content-encoding'), 'decoding drops content-encoding');
    }
  }
  // by eye: the first response's record
  const { head } = await headRecords(HEADS[0]);
  // (the 5 names; their first values, x-empty's empty; then (index, value)
  // for set-cookie's second and via's second and third)
  assert.equal(head[1], '1.1\n200\nOK\n5\ncontent-type\nset-cookie\nx-empty\nvia\ncontent-length\ntext/plain\na=1\n\n1\n2\n1\nb=2\n3\n2\n3\n3');
});

test("head records: Debian's Ruby reads them with the generated Lines.head_fields into the @header the JS reader gives", async () => {
  const recs = [];
  for (const text of HEADS) {
    const { head, end } = await headRecords(text);
    recs.push([head[1], 3]);
    if (end) recs.push([end, 0]);
  }
  const program = `
require 'json'
require ${JSON.stringify(fileURLToPath(new URL('net_http_wasm/constants.rb', root)))}
out = JSON.parse($stdin.read).map do |s, c|
  NetHttpWasm::Lines.head_fields(s.encode('ISO-8859-1').b.split("\\n", -1), c).map { |k, v| [k, v].flatten.map { |x| x.dup.force_encoding('ISO-8859-1').encode('UTF-8') } }
end
print JSON.generate(out)`;
  const r = spawnSync('ruby', ['-e', program], { input: JSON.stringify(recs), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  recs.forEach(([s, c], i) => {
    const js = bridgeConstants.readHeadRecord(s, c === 0).fields.map(([n, vs]) => [n, ...vs]);
    assert.deepEqual(out[i], js, JSON.stringify(s));
  });
});

// @header Hashes of requests (JSON: name => values): one value each (the
// flat record), a field given twice, a field with no value, no field.
const REQUESTS = [
  { method: 'GET', path: '/p?q=1', version: '1.1', fields: [['accept', ['*/*']], ['user-agent', ['Ruby']], ['host', ['example.test']]] },
  { method: 'POST', path: '/form', version: '1.1', fields: [['accept', ['a', 'b']], ['content-type', ['text/plain']], ['x-none', []]] },
  { method: 'HEAD', path: '/', version: '1.0', fields: [] },
];

test("request records: Debian's Ruby (generated Lines.request_record) and JS (requestRecord) write the same, the module writes net/http's head from them", async () => {
  const { getDefaultCodec } = await import('../../js/index.mjs');
  const { PROFILES } = await import('../../js/schema.mjs');
  // Ruby's records, its refusals, and MRI's own write_header of each request
  const program = `
require 'json'
require 'net/http'
require 'stringio'
require ${JSON.stringify(fileURLToPath(new URL('net_http_wasm/constants.rb', root)))}
reqs = JSON.parse($stdin.read)
out = reqs.map do |r|
  h = r['fields'].to_h
  rec = ''.b
  flags = NetHttpWasm::Lines.request_record(rec, r['method'], r['path'], r['version'], h)
  req = Net::HTTPGenericRequest.new(r['method'], false, true, r['path'])
  req.instance_variable_set(:@header, h)
  io = StringIO.new(+'')
  req.send(:write_header, Net::BufferedIO.new(io), r['version'], r['path'])
  [rec, flags, io.string]
end
# refused: a value that is not a String, values that are not an Array, a "\\n" in a line
bad = [{ 'x' => [1] }, { 'x' => 'v' }, { 'x' => ["a\\nb"] }, { "a\\nb" => ['v'] }, { 'x' => ['a', "b\\nc"] }]
refused = bad.map { |h| NetHttpWasm::Lines.request_record(''.b, 'GET', '/', '1.1', h) }
print JSON.generate([out, refused])`;
  const r = spawnSync('ruby', ['-e', program], { input: JSON.stringify(REQUESTS), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [out, refused] = JSON.parse(r.stdout);
  assert.deepEqual(refused, [null, null, null, null, null]);
  const c = getDefaultCodec();
  REQUESTS.forEach((req, i) => {
    const [rec, flags, mriHead] = out[i];
    const js = bridgeConstants.requestRecord(req);
    assert.equal(rec, js.record, `${req.method}: the same record`);
    assert.equal(flags, js.flags);
    // the module reads it and writes the head as MRI's write_header does
    const bytes = Buffer.from(rec, 'latin1');
    c.begin(bytes.length);
    c.u8.set(bytes, c.inPtr);
    c.pos = bytes.length;
    c.call('nh_wasm_write_header', flags, PROFILES['4.0']);
    assert.equal(Buffer.from(c.u8.subarray(c.outPtr(), c.outPtr() + c.outLen())).toString('latin1'), mriHead, `${req.method}: write_header`);
  });
  // by eye: the flat record and the counted one
  assert.equal(out[0][0], 'GET\n/p?q=1\n1.1\naccept\n*/*\nuser-agent\nRuby\nhost\nexample.test\n');
  assert.equal(out[1][0], 'POST\n/form\n1.1\naccept\n2\na\nb\ncontent-type\n1\ntext/plain\nx-none\n0\n');
  assert.equal(out[1][1], 0);
  assert.equal(out[0][1], bridgeConstants.SEND_FLAT);
});
