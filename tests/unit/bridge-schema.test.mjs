// The bridge's calls are declared once (schema/bridge.mjs `calls`): the
// Bridge has each of them with the arguments declared, and every call the
// Ruby side makes names a declared one with as many arguments as it takes,
// through call_wait exactly when it may wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { calls, tlsSettings } from '../../schema/bridge.mjs';
import { Bridge } from '../../js/ruby/bridge.mjs';
import { WAITING_CALLS } from '../../js/ruby/constants.mjs';

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
    open: (_bridge, spec) => (specs.push(spec), 'errno\nECONNREFUSED'),
    upgrade: (_bridge, _conn, spec) => (specs.push(spec), 'errno\nECONNRESET'),
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
