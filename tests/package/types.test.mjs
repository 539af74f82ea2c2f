// The packed tarball's package.json and declarations, as tools and
// TypeScript projects read them: @arethetypeswrong/cli and publint report
// nothing for either entry ('.' and './ruby'), and TypeScript code using
// both entries, from ES modules and CommonJS, compiles with lib es2022 and
// no DOM, with and without @types/node, where each wrong use is an error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { installPackage } from '../support/installed.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = (name) => join(root, 'node_modules/.bin', name);

let pkg;
before(() => {
  pkg = installPackage();
  pkg.npmInstall('@types/node');
});
after(() => pkg?.remove());

const run = (file, args, cwd) =>
  new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 180000, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ status: err ? err.code : 0, stdout, stderr }));
  });

test('attw: both entries resolve to their own declarations in node10, node16 (CJS and ESM) and bundler, no problem found', async () => {
  // --no-definitely-typed: no look-up of @types/net-http-wasm on the registry
  const r = await run(bin('attw'), [pkg.tarball, '--format', 'json', '--profile', 'strict', '--no-definitely-typed', '--entrypoints', '.', './ruby'], pkg.dir);
  const { analysis } = JSON.parse(r.stdout);
  assert.deepEqual(analysis.problems, [], r.stdout.slice(0, 4000));
  assert.equal(r.status, 0, r.stderr);
  const seen = {};
  for (const [entry, { resolutions }] of Object.entries(analysis.entrypoints))
    for (const [mode, { resolution }] of Object.entries(resolutions)) seen[`${entry} ${mode}`] = resolution.fileName.replace('/node_modules/net-http-wasm/', '');
  assert.deepEqual(seen, {
    '. node10': 'js/index.d.cts',
    '. node16-cjs': 'js/index.d.cts',
    '. node16-esm': 'js/index.d.ts',
    '. bundler': 'js/index.d.ts',
    './ruby node10': 'js/ruby.d.cts',
    './ruby node16-cjs': 'js/ruby.d.cts',
    './ruby node16-esm': 'js/ruby.d.ts',
    './ruby bundler': 'js/ruby.d.ts',
  });
});

test('publint: nothing to report, suggestions included, warnings counted as errors', async () => {
  const tarball = readFileSync(pkg.tarball);
  const { messages, pkg: json } = await publint({
    pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
    level: 'suggestion',
    strict: true,
  });
  assert.deepEqual(messages.map((m) => `${m.type}: ${formatMessage(m, json, { color: false })}`), []);
  assert.equal(json.name, 'net-http-wasm');
});

// Both entries as a user's code takes them; each @ts-expect-error must meet
// an error, so declarations that resolved to `any` would fail.
const USE = `
import { Request, URI, parseResponse, responseFromFetch, encodeWwwForm, NetHttpError, init, type Profile, type ResponseEvent } from 'net-http-wasm';
import { createRubyVM, installNetHttp, type InstallOptions } from 'net-http-wasm/ruby';

const profile: Profile = '3.4';
const req = new Request('POST', URI('http://example.com/up'), { 'X-A': '1' }, { profile });
req.setForm([['f', new Uint8Array(2), { filename: 'f.bin' }], ['s', 'text']], 'multipart/form-data');
req.bodyStream = [new Uint8Array(1), 'two'];
const bytes: Uint8Array = req.toBytes();
const form: string = encodeWwwForm({ q: ['a', 1] });
const res = parseResponse('HTTP/1.1 200 OK\\r\\n\\r\\n');
const code: string = res.code;
const ev: ResponseEvent | null = null;
declare const fetched: Parameters<typeof responseFromFetch>[0];
const fromFetch: Promise<string> = responseFromFetch(fetched).then((r) => r.code);
const options: InstallOptions = { blocking: true, profile: '4.0', tls: { rejectUnauthorized: false } };
export async function main(): Promise<string> {
  await init(bytes);
  const { vm, dispose } = await createRubyVM({ ruby: '3.4', gems: ['/usr/lib/ruby/vendor_ruby'], ...options });
  installNetHttp(vm, { codec: false });
  const out = (await vm.evalAsync('1 + 1')).toString();
  await dispose();
  return out + form + code + String(ev) + (await fromFetch) + NetHttpError.name;
}

// @ts-expect-error a profile is '4.0' or '3.4'
new Request('GET', '/', null, { profile: '3.3' });
// @ts-expect-error the body is bytes or a string
req.body = 42;
// @ts-expect-error createRubyVM's ruby is a version or a module
createRubyVM({ ruby: 3.4 });
// @ts-expect-error transport is 'node', 'fetch' or a function
installNetHttp({} as never, { transport: 'xhr' });
`;

const CONFIGS = [
  ['node16, no @types/node', { module: 'node16', types: [] }],
  ['nodenext, no @types/node', { module: 'nodenext', types: [] }],
  ['nodenext, @types/node', { module: 'nodenext', types: ['node'] }],
  ['bundler, no @types/node', { module: 'esnext', moduleResolution: 'bundler', types: [] }],
];

test('the declarations compile with lib es2022 and no DOM, from ES modules and CommonJS, with and without @types/node', { timeout: 300000 }, async () => {
  writeFileSync(join(pkg.dir, 'use.mts'), USE);
  writeFileSync(join(pkg.dir, 'use.cts'), USE);
  for (const [name, options] of CONFIGS) {
    const files = options.moduleResolution === 'bundler' ? ['use.mts'] : ['use.mts', 'use.cts'];
    // with @types/node: README's whole JS API, as tests/unit/types/usage.ts uses it (a .ts file here is CommonJS)
    if (options.types.length) {
      copyFileSync(join(root, 'tests/unit/types/usage.ts'), join(pkg.dir, 'usage.ts'));
      files.push('usage.ts');
    }
    const tsconfig = { compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, target: 'es2022', lib: ['es2022'], ...options }, files };
    writeFileSync(join(pkg.dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const r = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--listFiles'], pkg.dir);
    const listed = r.stdout.split('\n').filter((l) => l.includes('/net-http-wasm/js/'));
    assert.equal(r.status, 0, `${name}:\n${r.stdout.split('\n').filter((l) => !l.startsWith('/')).join('\n')}`);
    assert.equal(r.stdout.split('\n').some((l) => /lib\.dom\.d\.ts$/.test(l)), false, `${name}: no DOM`);
    assert.equal(r.stdout.split('\n').some((l) => l.includes('/@types/node/')), options.types.length > 0, `${name}: @types/node`);
    for (const f of ['index.d.ts', 'ruby.d.ts', 'index.d.cts', 'ruby.d.cts']) assert.ok(listed.some((l) => l.endsWith(`/js/${f}`)), `${name}: ${f} in ${listed}`);
  }
});
