// Compiled Ruby kept from one VM to the next (createRubyVM's and
// installNetHttp's compileCache): a later process loads what an earlier one
// kept and compiles nothing again; a changed file, or a kept one that is cut
// short or altered, is compiled again; the default folder, and none with
// compileCache: false; a VM of the same process takes what another kept.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, statSync, rmSync, truncateSync, existsSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRubyVM, installNetHttp } from '../../js/ruby/node.mjs';
import { VERSIONS, bootVM } from '../support/rubywasm.mjs';
import { withScript, runNode } from '../support/child.mjs';
import { rubySources } from '../../js/ruby/source.mjs';

const NODE_ENTRY = new URL('../../js/ruby/node.mjs', import.meta.url).href;

// A fresh process: createRubyVM with spec's options, spec.code's value printed.
const CHILD = `
import { createRubyVM } from ${JSON.stringify(NODE_ENTRY)};
const spec = JSON.parse(process.argv[2]);
const { vm, dispose } = await createRubyVM(spec.options);
const out = vm.eval(spec.code).toString();
await dispose();
console.log(out);
`;

// The files of a folder: name → { ino, mtimeMs, valid } (valid: its first
// 32 bytes are the SHA-256 of the rest).
function entries(dir) {
  const out = new Map();
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    const st = statSync(file);
    const bytes = readFileSync(file);
    const valid = bytes.length > 32 && createHash('sha256').update(bytes.subarray(32)).digest().equals(bytes.subarray(0, 32));
    out.set(name, { ino: st.ino, mtimeMs: st.mtimeMs, valid });
  }
  return out;
}

const made = [];
const folder = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

for (const version of VERSIONS) {
  // this package's Ruby; and, but in Ruby 3.4, the files `require` loads:
  // net/http and what it requires (uri, net/protocol, timeout...), a gem's
  const files = version !== '3.4';
  const own = rubySources.length - 1; // (compile_cache.rb itself is evaluated)
  const enough = (n) => (files ? n > own + 30 : n === own);
  describe(`compileCache, ruby.wasm ${version}`, { timeout: 240000 }, () => {
    let gem;
    let probe;
    before(() => {
      gem = folder('nhw-cc-gem-');
      mkdirSync(join(gem, 'lib'));
      probe = join(gem, 'lib', 'cc_probe.rb');
      writeFileSync(probe, 'module CcProbe; V = 1; end\n');
    });

    const code = "require 'net/http'; require 'cc_probe'; [Net::HTTP.name, CcProbe::V, URI('http://a.test/x').path].join(',')";
    const run = (options, env) =>
      withScript(CHILD, (file) => runNode([file, JSON.stringify({ options: { ruby: version, gems: [gem], ...options }, code })], env ? { env: { ...process.env, ...env } } : {}));

    test('a later process loads what an earlier one kept, and compiles a changed file again', async () => {
      writeFileSync(probe, 'module CcProbe; V = 1; end\n');
      const dir = folder('nhw-cc-');
      const first = await run({ compileCache: dir });
      assert.equal(first.status, 0, first.err);
      assert.equal(first.out.trim(), 'Net::HTTP,1,/x');
      const kept = entries(dir);
      assert.ok(enough(kept.size), `${kept.size} kept`);
      assert.ok([...kept.values()].every((e) => e.valid));

      const second = await run({ compileCache: dir });
      assert.equal(second.status, 0, second.err);
      assert.equal(second.out.trim(), 'Net::HTTP,1,/x');
      // nothing compiled and kept again: every file is the one written before
      assert.deepEqual(entries(dir), kept);

      writeFileSync(probe, 'module CcProbe; V = 2; end\n');
      const third = await run({ compileCache: dir });
      assert.equal(third.status, 0, third.err);
      assert.equal(third.out.trim(), 'Net::HTTP,2,/x');
      const now = entries(dir);
      assert.equal(now.size, kept.size + (files ? 1 : 0));
      for (const [name, e] of kept) assert.deepEqual(now.get(name), e, name);
    });

    test('a kept file cut short or altered is not loaded: compiled again and kept anew', async () => {
      writeFileSync(probe, 'module CcProbe; V = 1; end\n');
      const dir = folder('nhw-cc-');
      assert.equal((await run({ compileCache: dir })).status, 0);
      const kept = entries(dir);
      const names = [...kept.keys()];
      names.forEach((name, i) => {
        const file = join(dir, name);
        if (i % 2) truncateSync(file, Math.floor(statSync(file).size / 2));
        else {
          const bytes = readFileSync(file);
          bytes[bytes.length - 1] ^= 0xff;
          writeFileSync(file, bytes);
        }
      });
      assert.ok([...entries(dir).values()].every((e) => !e.valid));
      const r = await run({ compileCache: dir });
      assert.equal(r.status, 0, r.err);
      assert.equal(r.out.trim(), 'Net::HTTP,1,/x');
      const now = entries(dir);
      assert.deepEqual([...now.keys()].sort(), [...names].sort());
      assert.ok([...now.values()].every((e) => e.valid), 'every file written whole again');
    });

    test("by default in the user's cache folder, private to the user; none with compileCache: false", async () => {
      // (Linux: $XDG_CACHE_HOME/net-http-wasm)
      const cache = folder('nhw-cc-home-');
      const off = await run({ compileCache: false }, { XDG_CACHE_HOME: cache });
      assert.equal(off.status, 0, off.err);
      assert.equal(off.out.trim(), 'Net::HTTP,1,/x');
      assert.deepEqual(readdirSync(cache), []);

      const on = await run({}, { XDG_CACHE_HOME: cache });
      assert.equal(on.status, 0, on.err);
      assert.deepEqual(readdirSync(cache), ['net-http-wasm']);
      const dir = join(cache, 'net-http-wasm');
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.ok(enough(entries(dir).size));

      // a default folder others may write in is not used
      const open = folder('nhw-cc-home-');
      const d = join(open, 'net-http-wasm');
      mkdirSync(d);
      chmodSync(d, 0o777); // (mkdir's mode is masked by the umask)
      const shared = await run({}, { XDG_CACHE_HOME: open });
      assert.equal(shared.status, 0, shared.err);
      assert.equal(shared.out.trim(), 'Net::HTTP,1,/x');
      assert.deepEqual(readdirSync(d), []);
    });

    test('a VM of the same process takes what another kept; a syntax error is raised as Ruby raises it, nothing kept', async () => {
      writeFileSync(probe, 'module CcProbe; V = 1; end\n');
      const dir = folder('nhw-cc-');
      writeFileSync(join(gem, 'lib', 'cc_broken.rb'), 'def broken(\n');
      const one = await createRubyVM({ ruby: version, gems: [gem], compileCache: dir });
      try {
        assert.equal(one.vm.eval(code).toString(), 'Net::HTTP,1,/x');
        const raised = one.vm.eval("begin; require 'cc_broken'; rescue SyntaxError => e; e.message; end").toString();
        assert.match(raised, /cc_broken\.rb/);
      } finally {
        await one.dispose();
      }
      assert.ok(enough(entries(dir).size));
      for (const name of readdirSync(dir)) rmSync(join(dir, name));
      // the second VM's Ruby comes from this process's memory: nothing is
      // compiled, so nothing is written
      const two = await createRubyVM({ ruby: version, gems: [gem], compileCache: dir });
      try {
        assert.equal(two.vm.eval(code).toString(), 'Net::HTTP,1,/x');
      } finally {
        await two.dispose();
      }
      assert.deepEqual(readdirSync(dir), []);
    });

    test('installNetHttp on a VM made by hand keeps compiled Ruby too', async () => {
      const vm = await bootVM(version);
      const dir = folder('nhw-cc-');
      const handle = installNetHttp(vm, { blocking: true, compileCache: dir });
      try {
        assert.equal(vm.eval("require 'net/http'; Net::HTTP.name").toString(), 'Net::HTTP');
        assert.ok(enough(entries(dir).size), `${entries(dir).size} kept`);
      } finally {
        await handle.uninstall();
      }
    });
  });
}

test('compileCache takes true, false or a folder', async () => {
  await assert.rejects(createRubyVM({ compileCache: 1 }), { name: 'TypeError', message: 'compileCache must be true, false or a folder, not number' });
});
