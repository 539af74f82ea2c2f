// Runs benchmarks/ruby/bench.rb inside ruby.wasm 4.0 (its own net/http),
// with the same arguments as the native driver.
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';
import v8 from 'node:v8';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

v8.setFlagsFromString('--no-incremental-marking');
const here = dirname(fileURLToPath(import.meta.url));
const [inputsJson, ops, passes, minNs, mode] = process.argv.slice(2);
const { RubyVM } = await import('@ruby/wasm-wasi');
const module = await WebAssembly.compile(readFileSync(new URL('../node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm', import.meta.url)));
const wasi = new WASI({
  version: 'preview1',
  returnOnExit: true,
  preopens: { '/bench': here, '/stubs': `${here}/../tests/support/oracle/stubs`, '/inputs': dirname(inputsJson) },
});
const { vm } = await RubyVM.instantiateModule({ module, wasip1: wasi });
const args = [`/inputs/${inputsJson.split('/').pop()}`, ops, passes, minNs, mode];
vm.eval(`$stdout.sync = true; $LOAD_PATH.unshift('/stubs'); $bench_args = ${JSON.stringify(args)}; load '/bench/ruby/bench.rb'`);
