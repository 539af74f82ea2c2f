// A ruby.wasm 4.0 client process of the client benchmark:
//   node benchmarks/clients/rubywasm-client.mjs NAME
// NAME: a Ruby client of clients.rb, net-http-nocodec (net-http with
// installNetHttp's { codec: false }) or net-http-blocking (net-http with
// { blocking: true }). The VM is made once, at setup, and serves every pass.
//
// The VM is made as README shows: createRubyVM (TLS trust through its
// { tls: { ca } } option), with `require 'rubygems'`, the installed gems'
// folders (its `gems` option, on $LOAD_PATH) and a writable /tmp (open-uri
// keeps bodies over 10 kB in a Tempfile). It gets a copy of the gems'
// folders, not the system's own, which a WASI mount would leave writable.
// A run's lanes are threads of one Ruby program, as in mri-client.rb
// (net-http-wasm's Thread, on its fiber scheduler).
import { readFileSync, existsSync, readdirSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, basename } from 'node:path';
import { createRubyVM } from 'net-http-wasm/ruby';
import { serve, errorKey } from './worker.mjs';

const CLIENTS_RB = new URL('./clients.rb', import.meta.url);
const RUBY_WASM_VERSION = JSON.parse(readFileSync(new URL('../../node_modules/@ruby/4.0-wasm-wasi/package.json', import.meta.url), 'utf8')).version;

// Files a client's gems consist of (features as `require` names them).
const FEATURES = {
  'net-http-persistent': ['net/http/persistent', 'connection_pool'],
  faraday: ['faraday', 'ruby2_keywords', 'composite_io', 'net/http/persistent', 'connection_pool'],
  excon: ['excon'],
  httpclient: ['httpclient'],
  // (http-parser: net-http-wasm's HttpParser stands in for the gem)
  httprb: ['http', 'http/form_data', 'addressable/uri', 'public_suffix'],
};

// Where Debian (and `gem install`) put gems' Ruby files; NHW_BENCH_GEMS
// (folders separated by ':') is searched first.
function gemRoots() {
  const roots = (process.env.NHW_BENCH_GEMS || '').split(':').filter(Boolean);
  roots.push('/usr/lib/ruby/vendor_ruby');
  const under = (dir, depth) => {
    if (!existsSync(dir)) return [];
    let found = [dir];
    for (let i = 0; i < depth; i++) {
      found = found.flatMap((d) => (existsSync(d) ? readdirSync(d).map((e) => join(d, e)) : []));
    }
    return found.map((d) => join(d, 'lib')).filter((d) => existsSync(d));
  };
  roots.push(...under('/usr/share/rubygems-integration/all/gems', 1));
  roots.push(...under('/var/lib/gems', 2).filter((d) => d.includes('/gems/')));
  return roots;
}

const temps = [];
process.on('exit', () => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const tempDir = (prefix) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};

// Copies the lib folders that hold the client's features (each with the
// data/ folder beside it, as addressable's Unicode tables are) under one
// folder; returns the copies, in search order.
function copyGems(name) {
  const roots = gemRoots();
  const chosen = [];
  for (const f of FEATURES[name.replace(/-(nocodec|blocking)$/, '')] || []) {
    const root = roots.find((r) => existsSync(join(r, `${f}.rb`)));
    if (root && !chosen.includes(root)) chosen.push(root);
  }
  if (!chosen.length) return [];
  const host = tempDir('nhw-bench-gems-');
  return chosen.map((root, i) => {
    const data = join(root, '..', 'data');
    if (!(root.endsWith('/lib') && existsSync(data))) {
      cpSync(root, join(host, String(i)), { recursive: true, dereference: true });
      return join(host, String(i));
    }
    cpSync(root, join(host, String(i), 'lib'), { recursive: true, dereference: true });
    cpSync(data, join(host, String(i), 'data'), { recursive: true, dereference: true });
    return join(host, String(i));
  });
}

const name = process.argv[2];
const rubyName = name === 'net-http-nocodec' || name === 'net-http-blocking' ? 'net-http' : name;
let vm = null;
let dispose = null;

serve({
  async setup(url, modes, ca) {
    // (the certificate's folder mounted too, named by SSL_CERT_FILE as for
    // MRI: Excon reads it; Net::HTTP has { tls: { ca } })
    ({ vm, dispose } = await createRubyVM({
      gems: copyGems(name),
      mounts: ca ? { '/ca': dirname(ca) } : {},
      env: ca ? { SSL_CERT_FILE: `/ca/${basename(ca)}` } : {},
      rubygems: true,
      codec: name !== 'net-http-nocodec',
      blocking: name === 'net-http-blocking',
      ...(ca ? { tls: { ca: readFileSync(ca, 'utf8') } } : {}),
    }));
    vm.eval(readFileSync(CLIENTS_RB, 'utf8'));
    const r = await vm.evalAsync(`JSON.generate(ClientBench.setup(${JSON.stringify(rubyName)}, ${JSON.stringify(url)}, ${JSON.stringify(modes)}))`);
    const version = `@ruby/4.0-wasm-wasi ${RUBY_WASM_VERSION}: ${vm.eval('ClientBench.version').toString()}${{ 'net-http-nocodec': ' (codec off)', 'net-http-blocking': ' (blocking transport)' }[name] || ''}`;
    return { modes: JSON.parse(r.toString()), version };
  },

  async run(mode, counts, expect) {
    const total = counts.reduce((a, b) => a + b, 0);
    vm.eval(`ClientBench.start_run(${expect.len}, ${JSON.stringify(expect.sha256)})`);
    const code = counts.length === 1
      ? `ClientBench.lane(${JSON.stringify(mode)}, ${counts[0]}); nil`
      : `${JSON.stringify(counts)}.map { |k| Thread.new { ClientBench.lane(${JSON.stringify(mode)}, k) } }.each(&:join); nil`;
    const lanes = await Promise.allSettled([vm.evalAsync(code)]);
    const failed = lanes.find((l) => l.status === 'rejected');
    let r;
    try {
      r = JSON.parse(vm.eval('ClientBench.finish_run').toString());
    } catch (e) {
      r = { ok: 0, errors: {}, latMs: [] };
      if (!failed) throw e;
    }
    // an exception that escaped a lane (not a StandardError: a VM failure)
    const missing = total - r.latMs.length;
    if (failed && missing > 0) {
      const key = `VM: ${errorKey(failed.reason)}`.slice(0, 200);
      r.errors[key] = (r.errors[key] || 0) + missing;
    }
    return r;
  },

  async close() {
    if (dispose) await dispose();
  },
});
