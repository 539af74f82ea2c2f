// The ruby.wasm bridge's JS (js/ruby/): small files, one concern each, and
// no module that imports, directly or not, itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../../js/ruby/', import.meta.url));
// (source.mjs: the Ruby side as strings, generated)
const files = readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.mjs') && f !== 'source.mjs').map((f) => join(dir, f));
const LIMIT = 400;

test(`no file of js/ruby/ is over ${LIMIT} lines`, () => {
  assert.ok(files.length > 20, `only ${files.length} files found`);
  const long = files.map((f) => [relative(dir, f), readFileSync(f, 'utf8').split('\n').length - 1]).filter(([, n]) => n > LIMIT);
  assert.deepEqual(long, []);
});

test('the modules of js/ruby/ import one another without a cycle', () => {
  // static imports of this folder's modules (import ... from './x.mjs', export ... from)
  const graph = new Map();
  for (const f of files) {
    const deps = [...readFileSync(f, 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gms)].map((m) => join(dirname(f), m[1])).filter((d) => files.includes(d));
    graph.set(f, deps);
  }
  assert.ok([...graph.values()].flat().length > 30, 'imports not found');
  const state = new Map(); // file → 1 visiting, 2 done
  const cycles = [];
  const visit = (f, path) => {
    if (state.get(f) === 2) return;
    if (state.get(f) === 1) {
      cycles.push([...path.slice(path.indexOf(f)), f].map((x) => relative(dir, x)).join(' → '));
      return;
    }
    state.set(f, 1);
    for (const d of graph.get(f)) visit(d, [...path, f]);
    state.set(f, 2);
  };
  for (const f of files) visit(f, []);
  assert.deepEqual(cycles, []);
});
