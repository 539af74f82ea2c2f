// A VM whose WebAssembly code traps (Ruby's deep recursion in C, which
// ruby.wasm cannot check: `unreachable`, or V8's call stack exhausted) is
// dead: the call that met the trap, the evalAsync calls still waiting (one
// resumed by a wake after a Net::HTTP wait, one parked in another) and every
// later call (vm.eval, vm.evalAsync, a value got before) fail at once with
// ERR_RUBY_VM_DEAD, its connections are closed, the collected values'
// finalizers call nothing (no uncaught error later), and dispose() still
// cleans up. Each case runs as a user's program in its own Node process, with
// Node's defaults (an unhandled rejection or uncaught error ends it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const node = new URL('../../js/ruby/node.mjs', import.meta.url).href;
// nests arrays deeper than the C stack: Array#inspect recurses in C
const DEEP = 'a = []; 300_000.times { a = [a] }; a.inspect.size';

// Runs `body` (an ES module's code, createRubyVM imported) in a fresh node.
function program(body) {
  const code = `import { createRubyVM } from ${JSON.stringify(node)};
    import { existsSync } from 'node:fs';
    const said = (e) => (e && e.code === 'ERR_RUBY_VM_DEAD' && /^net-http-wasm: the Ruby VM is dead: /.test(e.message) ? 'dead' : 'other: ' + (e && e.message));
    // what a collected value's finalizer would do (gc, then a turn for the callbacks)
    const collect = async () => { for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 50)); } };
    ${body}`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--expose-gc', '--input-type=module', '-e', code], { timeout: 240000, cwd: fileURLToPath(new URL('.', import.meta.url)) },
      (err, stdout, stderr) => resolve({ status: err ? err.code ?? err.signal : 0, stdout, stderr }));
  });
}

const ok = (r, lines) => {
  assert.equal(r.stderr, '', r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), lines);
  assert.equal(r.status, 0);
};

test('a trap after a Net::HTTP wait rejects that evalAsync and one parked in another; later calls fail at once; dispose cleans up', { timeout: 300000 }, async () => {
  const r = await program(`
    import { createServer } from 'node:http';
    let slowSocket = null;
    const server = createServer((req, res) => {
      if (req.url === '/slow') slowSocket = req.socket; // never answered
      else res.end('fast');
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const base = 'http://127.0.0.1:' + server.address().port;
    const { vm, tmp, dispose } = await createRubyVM();
    const kept = vm.eval('[1, 2]');
    const parked = vm.evalAsync("require 'net/http'; Net::HTTP.get(URI('" + base + "/slow'))");
    while (!slowSocket) await new Promise((r) => setTimeout(r, 10));
    const slowClosed = new Promise((r) => slowSocket.once('close', () => r('slow connection closed')));
    const trapping = vm.evalAsync("Net::HTTP.get(URI('" + base + "/fast')); ${DEEP}");
    const [a, b] = await Promise.allSettled([parked, trapping]);
    console.log('parked', a.status, said(a.reason));
    console.log('trapping', b.status, said(b.reason), b.reason.cause.constructor.name, b.reason.cause.message);
    console.log(await Promise.race([slowClosed, new Promise((r) => setTimeout(() => r('slow connection still open'), 5000))]));
    try { vm.eval('1'); } catch (e) { console.log('eval', said(e)); }
    await vm.evalAsync('1').catch((e) => console.log('evalAsync', said(e)));
    try { kept.toString(); } catch (e) { console.log('value', said(e)); }
    await collect();
    await dispose();
    console.log('tmp', existsSync(tmp) ? 'left' : 'removed');
    server.close();
  `);
  ok(r, [
    'parked rejected dead',
    'trapping rejected dead RuntimeError unreachable',
    'slow connection closed',
    'eval dead',
    'evalAsync dead',
    'value dead',
    'tmp removed',
  ]);
});

test('a trap in vm.eval (ruby.wasm 4.0 and 3.4, both transports; V8 out of stack too): that call and the later ones say the VM is dead', { timeout: 300000 }, async () => {
  const r = await program(`
    for (const [ruby, blocking, code] of [['4.0', false, ${JSON.stringify(DEEP)}], ['3.4', false, ${JSON.stringify(DEEP)}], ['4.0', true, ${JSON.stringify(DEEP)}],
      ['4.0', false, 'a = []; 300_000.times { a = [a] }; Marshal.dump(a).size']]) {
      const { vm, dispose } = await createRubyVM({ ruby, blocking });
      const kept = vm.eval('Object.new');
      const name = ruby + (blocking ? ' blocking' : ' waiting');
      try { vm.eval(code); console.log(name, 'no trap'); } catch (e) { console.log(name, said(e), e.cause.constructor.name); }
      try { vm.eval('1'); } catch (e) { console.log(name, 'then', said(e)); }
      await vm.evalAsync('1').catch((e) => console.log(name, 'then async', said(e)));
      try { kept.call('inspect'); } catch (e) { console.log(name, 'then a value', said(e)); }
      await collect();
      await dispose();
    }
  `);
  const lines = [];
  for (const [name, cause] of [['4.0 waiting', 'RuntimeError'], ['3.4 waiting', 'RuntimeError'], ['4.0 blocking', 'RuntimeError'], ['4.0 waiting', 'RangeError']])
    lines.push(`${name} dead ${cause}`, `${name} then dead`, `${name} then async dead`, `${name} then a value dead`);
  ok(r, lines);
});

test('a VM that did not trap is left as it was: Ruby errors are Ruby errors', { timeout: 120000 }, async () => {
  const r = await program(`
    const { vm, dispose } = await createRubyVM();
    try { vm.eval('def f(n) = f(n + 1); f(0)'); } catch (e) { console.log(said(e).slice(0, 5), /stack level too deep \\(SystemStackError\\)/.test(e.message)); }
    await vm.evalAsync("raise ArgumentError, 'no'").catch((e) => console.log(said(e).slice(0, 5), /no \\(ArgumentError\\)/.test(e.message)));
    console.log(vm.eval('1 + 1').toString(), (await vm.evalAsync('2 + 2')).toString());
    await dispose();
  `);
  ok(r, ['other true', 'other true', '2 4']);
});

test('an exception that is not a StandardError, raised once evalAsync code has waited, rejects that call (nothing uncaught ends the process); the VM goes on', { timeout: 120000 }, async () => {
  const r = await program(`
    const { vm, dispose } = await createRubyVM();
    for (const code of ['sleep 0.01; raise Exception, "after a sleep"', 'Thread.new { sleep 0.01 }.join; raise NoMemoryError, "after a join"', 'sleep 0.01; def f(n) = f(n + 1); f(0)', 'sleep 0.01; exit 3']) {
      await vm.evalAsync(code).then((v) => console.log('resolved', String(v)), (e) => console.log(said(e).slice(0, 5), e.message.split('\\n')[0].replace(/^.*: /, '')));
    }
    console.log((await vm.evalAsync('sleep 0.01; 2 + 2')).toString());
    await dispose();
  `);
  ok(r, ['other after a sleep (Exception)', 'other after a join (NoMemoryError)', 'other stack level too deep (SystemStackError)', 'other exit (SystemExit)', '4']);
});
