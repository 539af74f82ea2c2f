// Both WebAssembly builds of the codec, each with the whole API bound to it.
import { existsSync, readFileSync } from 'node:fs';
import { createNetHttp } from '../../js/index.mjs';

const root = new URL('../../', import.meta.url);

/** A new instance of a build's module (its own memory), with the whole API. */
export const freshApi = (file) => createNetHttp(readFileSync(new URL(file, root)));

// wasm/nethttp.emcc.wasm exists once `bash build.sh` has run (it is not
// committed); CI sets NETHTTP_REQUIRE_EMCC=1 so that a missing build fails.
const emcc = 'wasm/nethttp.emcc.wasm';
if (process.env.NETHTTP_REQUIRE_EMCC === '1' && !existsSync(new URL(emcc, root)))
  throw new Error(`${emcc} is missing: run bash build.sh`);
export const builds = [
  { name: 'clang', file: 'wasm/nethttp.wasm' },
  { name: 'emcc', file: emcc },
]
  .filter((b) => b.name !== 'emcc' || existsSync(new URL(b.file, root)))
  .filter((b) => !process.env.NETHTTP_BUILD || process.env.NETHTTP_BUILD === b.name)
  .map((b) => ({ ...b, api: freshApi(b.file) }));
if (builds.length === 0) throw new Error('NETHTTP_BUILD selected no build (clang or emcc)');
