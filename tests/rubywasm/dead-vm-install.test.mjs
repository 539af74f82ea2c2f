// A VM the user made (RubyVM.instantiateModule over node:wasi, as README's
// installNetHttp lines do) and gave to installNetHttp is guarded as
// createRubyVM's is (tests/rubywasm/dead-vm.test.mjs): once its WebAssembly
// code traps, the evalAsync calls still waiting (one resumed by a wake after
// a Net::HTTP wait, one parked in another) and every later call (vm.eval,
// vm.evalAsync, a value got before) fail at once with ERR_RUBY_VM_DEAD, its
// connections are closed, the collected values' finalizers call nothing, and
// uninstall() still ends. Each case runs as a user's program in its own Node
// process, with Node's defaults (an unhandled rejection or uncaught error
// ends it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const node = new URL('../../js/ruby/node.mjs', import.meta.url).href;
// nests arrays deeper than the C stack: Array#inspect recurses in C
const DEEP = 'a = []; 300_000.times { a = [a] }; a.inspect.size';

// Runs `body` (an ES module's code; makeVM(ruby) makes a VM as a user does,
// without net-http-wasm) in a fresh node.
function program(body) {
  const code = `import { installNetHttp } from ${JSON.stringify(node)};
    import { RubyVM } from '@ruby/wasm-wasi';
    import { WASI } from 'node:wasi';
    import { readFileSync } from 'node:fs';
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const makeVM = async (ruby = '4.0') => {
      const module = await WebAssembly.compile(readFileSync(require.resolve('@ruby/' + ruby + '-wasm-wasi/dist/ruby+stdlib.wasm')));
      const { vm } = await RubyVM.instantiateModule({ module, wasip1: new WASI({ version: 'preview1', returnOnExit: true }) });
      return vm;
    };
    const said = (e) => (e && e.code === 'ERR_RUBY_VM_DEAD' && /^net-http-wasm: the Ruby VM is dead: /.test(e.message) ? 'dead' : 'other: ' + (e && e.message));
    // what a collected value's finalizer would do (gc, then a turn for the callbacks)
    const collect = async () => { for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 50)); } };
    ${body}`;
  // (node:wasi's ExperimentalWarning is the user's; Node 20's GC needs
  // incremental marking off with ruby.wasm: docs/ruby-wasm.md)
  const flags = ['--expose-gc', '--disable-warning=ExperimentalWarning', '--no-incremental-marking'];
  return new Promise((resolve) => {
    execFile(process.execPath, [...flags, '--input-type=module', '-e', code], { timeout: 240000, cwd: fileURLToPath(new URL('.', import.meta.url)) },
      (err, stdout, stderr) => resolve({ status: err ? err.code ?? err.signal : 0, stdout, stderr }));
  });
}

const ok = (r, lines) => {
  assert.equal(r.stderr, '', r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), lines);
  assert.equal(r.status, 0);
};

test("installNetHttp on the user's VM: a trap after a Net::HTTP wait rejects that evalAsync and one parked in another; later calls fail at once; uninstall ends", { timeout: 300000 }, async () => {
  const r = await program(`
    import { createServer } from 'node:http';
    let slowSocket = null;
    const server = createServer((req, res) => {
      if (req.url === '/slow') slowSocket = req.socket; // never answered
      else res.end('fast');
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const base = 'http://127.0.0.1:' + server.address().port;
    const vm = await makeVM();
    const { uninstall } = installNetHttp(vm);
    const kept = vm.eval('[1, 2]');
    const parked = vm.evalAsync("require 'net/http'; Net::HTTP.get(URI('" + base + "/slow'))");
    while (!slowSocket) await new Promise((r) => setTimeout(r, 10));
    const slowClosed = new Promise((r) => slowSocket.once('close', () => r('slow connection closed')));
    const trapping = vm.evalAsync("Net::HTTP.get(URI('" + base + "/fast')); ${DEEP}");
    const [a, b] = await Promise.race([Promise.allSettled([parked, trapping]), new Promise((r) => setTimeout(() => r([{ status: 'still pending' }, { status: 'still pending' }]), 60000))]);
    console.log('parked', a.status, said(a.reason));
    console.log('trapping', b.status, said(b.reason), b.reason?.cause?.constructor.name, b.reason?.cause?.message);
    console.log(await Promise.race([slowClosed, new Promise((r) => setTimeout(() => r('slow connection still open'), 5000))]));
    try { vm.eval('1'); console.log('eval worked'); } catch (e) { console.log('eval', said(e)); }
    await vm.evalAsync('1').then(() => console.log('evalAsync worked'), (e) => console.log('evalAsync', said(e)));
    try { kept.toString(); console.log('value worked'); } catch (e) { console.log('value', said(e)); }
    await collect();
    await uninstall();
    console.log('uninstalled');
    server.close();
    process.exit(0); // (a VM left waiting for ever would keep nothing alive, but say so)
  `);
  ok(r, [
    'parked rejected dead',
    'trapping rejected dead RuntimeError unreachable',
    'slow connection closed',
    'eval dead',
    'evalAsync dead',
    'value dead',
    'uninstalled',
  ]);
});

test("installNetHttp on the user's VM: a trap in vm.eval (ruby.wasm 4.0 and 3.4, both transports) and the later calls say the VM is dead; a VM that did not trap is left as it was", { timeout: 300000 }, async () => {
  const r = await program(`
    for (const [ruby, blocking] of [['4.0', false], ['3.4', false], ['4.0', true]]) {
      const vm = await makeVM(ruby);
      const name = ruby + (blocking ? ' blocking' : ' waiting');
      const { uninstall } = installNetHttp(vm, { blocking });
      try { vm.eval('def f(n) = f(n + 1); f(0)'); } catch (e) { console.log(name, 'ruby error', said(e).slice(0, 5), /stack level too deep \\(SystemStackError\\)/.test(e.message)); }
      const kept = vm.eval('Object.new');
      try { vm.eval(${JSON.stringify(DEEP)}); console.log(name, 'no trap'); } catch (e) { console.log(name, said(e), e.cause.constructor.name); }
      try { vm.eval('1'); console.log(name, 'then eval worked'); } catch (e) { console.log(name, 'then', said(e)); }
      await vm.evalAsync('1').then(() => console.log(name, 'then evalAsync worked'), (e) => console.log(name, 'then async', said(e)));
      try { kept.call('inspect'); console.log(name, 'then a value worked'); } catch (e) { console.log(name, 'then a value', said(e)); }
      await collect();
      await uninstall();
    }
  `);
  const lines = [];
  for (const name of ['4.0 waiting', '3.4 waiting', '4.0 blocking'])
    lines.push(`${name} ruby error other true`, `${name} dead RuntimeError`, `${name} then dead`, `${name} then async dead`, `${name} then a value dead`);
  ok(r, lines);
});
