// Both WebAssembly builds of the codec, each with the whole API bound to it.
import { readFileSync } from 'node:fs';
import { createNetHttp } from '../../js/index.mjs';

const root = new URL('../../', import.meta.url);

/** A new instance of a build's module (its own memory), with the whole API. */
export const freshApi = (file) => createNetHttp(readFileSync(new URL(file, root)));

export const builds = [
  { name: 'clang', file: 'wasm/nethttp.wasm' },
  { name: 'emcc', file: 'wasm/nethttp.emcc.wasm' },
]
  .filter((b) => !process.env.NETHTTP_BUILD || process.env.NETHTTP_BUILD === b.name)
  .map((b) => ({ ...b, api: freshApi(b.file) }));
if (builds.length === 0) throw new Error('NETHTTP_BUILD selected no build (clang or emcc)');
