// Writes the generated parts of docs/abi.md, the module's exported ABI:
//   the exports     from wasm/nethttp.wasm (names, wasm signatures) and the
//                   EXPORT(...) definitions in wasm/*.c (C declarations)
//   the constants   from schema/codec.mjs and schema/bridge.mjs
// Each part sits between "<!-- gen:NAME -->" and "<!-- /gen:NAME -->"; the
// prose around them is written by hand. It also checks that every function
// the module exports has a heading of its own in the page.
//   node tools/gen-abi-doc.mjs           rewrite docs/abi.md
//   node tools/gen-abi-doc.mjs --check   exit 1 when docs/abi.md is not current
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as codec from '../schema/codec.mjs';
import * as bridge from '../schema/bridge.mjs';

const root = new URL('../', import.meta.url);
const DOC = 'docs/abi.md';

// ---- the module's exports and their wasm types ----

const VALTYPES = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64' };

// The type of each exported function, read from the module's type, import,
// function and export sections: { name: { kind, params, results } }.
export function moduleExports(bytes) {
  let p = 8;
  const u8 = () => bytes[p++];
  const leb = () => {
    let v = 0;
    let shift = 0;
    let b;
    do {
      b = bytes[p++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return v;
  };
  const name = () => {
    const n = leb();
    const s = new TextDecoder().decode(bytes.subarray(p, p + n));
    p += n;
    return s;
  };
  const types = [];
  const funcs = []; // type index of each function, imported ones first
  const out = {};
  while (p < bytes.length) {
    const id = u8();
    const size = leb();
    const end = p + size;
    if (id === 1) {
      for (let i = 0, n = leb(); i < n; i++) {
        if (u8() !== 0x60) throw new Error('unknown type form');
        const params = Array.from({ length: leb() }, () => VALTYPES[u8()]);
        const results = Array.from({ length: leb() }, () => VALTYPES[u8()]);
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let i = 0, n = leb(); i < n; i++) {
        name();
        name();
        const kind = u8();
        if (kind === 0) funcs.push(leb());
        else if (kind === 1) (u8(), leb() & 1 ? (leb(), leb()) : leb()); // table: reftype, limits
        else if (kind === 2) (leb() & 1 ? (leb(), leb()) : leb()); // memory: limits
        else if (kind === 3) (u8(), u8()); // global: type, mutability
      }
    } else if (id === 3) {
      for (let i = 0, n = leb(); i < n; i++) funcs.push(leb());
    } else if (id === 7) {
      for (let i = 0, n = leb(); i < n; i++) {
        const nm = name();
        const kind = u8();
        const index = leb();
        out[nm] = kind === 0 ? { kind: 'function', ...types[funcs[index]] } : { kind: ['function', 'table', 'memory', 'global'][kind] };
      }
    }
    p = end;
  }
  return out;
}

// The C declarations of the functions wasm/*.c exports: { name: 'int nh_wasm_x(nh_ctx *c, size_t len)' }.
function cDeclarations() {
  const out = {};
  for (const f of readdirSync(new URL('wasm/', root)).filter((f) => f.endsWith('.c')).sort()) {
    const src = readFileSync(new URL(`wasm/${f}`, root), 'utf8');
    for (const m of src.matchAll(/EXPORT\((\w+)\)\s+([^{;]+?)\s*\{/g)) out[m[1]] = { decl: m[2].replace(/\s+/g, ' '), file: `wasm/${f}` };
  }
  return out;
}

const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
const code = (s) => `\`${s}\``;

function exportsTable(exp, decls) {
  const rows = [];
  for (const [name, e] of Object.entries(exp)) {
    if (e.kind !== 'function') {
      rows.push([code(name), e.kind, '', '']);
      continue;
    }
    const sig = `(${e.params.join(', ')}) → ${e.results.length ? e.results.join(', ') : '()'}`;
    const d = decls[name];
    rows.push([code(name), 'function', code(sig), d ? `${code(d.decl)} (${d.file})` : 'the C library\'s start-up (WASI reactor)']);
  }
  return table(['export', 'kind', 'wasm type', 'C declaration'], rows);
}

const entries = (g) => Object.entries(g).map(([name, [value, doc, extra]]) => ({ name, value, doc, extra }));
const constTable = (g, prefix = 'NH_') => table(['name', 'value', 'meaning'], entries(g).map((e) => [code(prefix + e.name), e.value, e.doc]));

function parts(exp, decls) {
  return {
    exports: exportsTable(exp, decls),
    status: constTable(codec.status),
    errors: table(
      ['class', 'value', 'exception class name', 'meaning'],
      entries(codec.errorClasses).map((e) => [code(`NH_${e.name}`), e.value, e.extra === null ? '' : code(e.extra), e.doc === e.extra ? '' : e.doc]),
    ),
    profiles: table(['name', 'value', 'Ruby'], entries(codec.profiles).map((e) => [code(`NH_${e.name}`), e.value, e.doc])),
    requestOps: constTable(codec.requestOps),
    headerQueries: constTable(codec.headerQueries),
    configRecord: table(['offset', 'field', 'type', 'meaning'], codec.recordLayout(codec.records.config).fields.map((f) => [f.at, code(f.name), f.type, f.doc])),
    configFlags: constTable(codec.configFlags),
    limits: constTable(codec.limits),
    events: constTable(codec.responseEvents),
    headFlags: constTable(codec.headFlags),
    commonNames: table(['id', 'name'], codec.commonNames.map((n, i) => [i + 1, code(n)])),
    sendFlags: constTable(bridge.sendFlags),
    bridgeHeadFlags: table(['name', 'value', 'meaning'], entries(bridge.headFlags).map((e) => [code(`NH_${e.name}`), e.value, e.doc])),
  };
}

/** docs/abi.md with its generated parts rewritten; throws on a missing marker or heading. */
export function render(doc, wasmBytes) {
  const exp = moduleExports(wasmBytes);
  const decls = cDeclarations();
  for (const name of Object.keys(decls))
    if (!exp[name]) throw new Error(`${name} is declared EXPORT in ${decls[name].file} but the module does not export it`);
  const generated = parts(exp, decls);
  let text = doc;
  for (const [key, body] of Object.entries(generated)) {
    const re = new RegExp(`(<!-- gen:${key} -->\\n)[\\s\\S]*?(<!-- /gen:${key} -->)`);
    if (!re.test(text)) throw new Error(`${DOC} has no <!-- gen:${key} --> ... <!-- /gen:${key} --> part`);
    text = text.replace(re, (_, open, close) => `${open}${body}\n${close}`);
  }
  const headings = text.split('\n').filter((l) => /^#{2,4} /.test(l));
  for (const [name, e] of Object.entries(exp)) {
    if (e.kind !== 'function' || name === '_initialize') continue;
    if (!headings.some((h) => h.includes(code(name)))) throw new Error(`${DOC} has no heading for the export ${name}`);
  }
  return text;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const url = new URL(DOC, root);
  const old = readFileSync(url, 'utf8');
  const text = render(old, readFileSync(new URL('wasm/nethttp.wasm', root)));
  if (text !== old) {
    if (values.check) {
      console.error(`${DOC} is not current: run node tools/gen-abi-doc.mjs`);
      process.exit(1);
    }
    writeFileSync(url, text);
  }
}
