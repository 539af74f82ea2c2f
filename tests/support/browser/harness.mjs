// Shared by tests/rubywasm-*.test.mjs and tests/browser/example-page.test.mjs: ruby.wasm
// VMs (tests/support/rubywasm.mjs; here, VMs in worker threads),
// local test servers on 127.0.0.1 that capture raw request bytes, and
// native MRI runs of the same Ruby code.
import net from 'node:net';
import { spawn } from 'node:child_process';

import { takeRequest, bootVM, fiberCertTrap, workerCalls } from '../rubywasm.mjs';
import { installNetHttp } from '../../../js/ruby/node.mjs';

export { VERSIONS, rubyWasmPath, bootVM, rb, rbJSON, takeRequest } from '../rubywasm.mjs';

/**
 * fn(vm) with a fresh VM given Net::HTTP over the waiting transport, for a
 * test that parses certificates in Ruby: its value, or null (and a
 * diagnostic of test context t) where that VM's fibers cannot
 * (fiberCertTrap).
 */
export async function onWaitingVM(t, version, fn) {
  const trap = fiberCertTrap(version, false);
  if (trap) {
    t.diagnostic(`waiting transport not run: ${trap}`);
    return null;
  }
  const vm = await bootVM(version);
  installNetHttp(vm);
  return fn(vm);
}

/**
 * A VM in a worker thread with Net::HTTP over the blocking transport
 * (vm-thread.mjs): { rb(code), set(name, value), close() }; rb() and
 * rbJSON() below take it in place of a RubyVM.
 */
export async function bootThreadVM(version, options = {}) {
  const { send, worker } = await workerCalls(new URL('./vm-thread.mjs', import.meta.url), { version, options });
  return {
    rb: (code) => send({ code }),
    set: (name, value) => send({ set: [name, value] }),
    close: () => worker.terminate(),
  };
}

// ---- servers ----

export function listen(server, port = 0) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  });
}

/** Closes a server and destroys every socket it accepted. */
export function closeServer(server, sockets) {
  for (const s of sockets || []) s.destroy();
  if (server.closeAllConnections) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * A raw TCP server that records every byte it receives, per connection, and
 * answers each request with respond(req, connIndex, reqIndex) → Buffer |
 * string | null (null: say nothing) | 'close' (close the connection).
 */
export async function captureServer(respond = () => 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok') {
  const conns = [];
  const sockets = new Set();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    const rec = { chunks: [], requests: [] };
    const index = conns.length;
    conns.push(rec);
    let buf = Buffer.alloc(0);
    s.on('data', (d) => {
      rec.chunks.push(d);
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const req = takeRequest(buf);
        if (!req) break;
        buf = Buffer.from(req.rest);
        rec.requests.push(req);
        const out = respond(req, index, rec.requests.length - 1, s);
        if (out === 'close') s.end();
        else if (out === 'destroy') s.destroy();
        else if (out != null) s.write(out);
      }
    });
  });
  const port = await listen(server);
  return {
    port,
    conns,
    /** Every byte received, connection after connection. */
    bytes: () => Buffer.concat(conns.flatMap((c) => c.chunks)),
    close: () => closeServer(server, sockets),
  };
}

// ---- native MRI ----

export { haveNativeRuby } from '../native-ruby.mjs';

/**
 * Runs Ruby code in native MRI (asynchronously: the test servers keep
 * running); `load` puts folders first on the load path, `argv` is ARGV.
 */
export function runNative(code, { timeout = 30000, load = [], argv = [] } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('ruby', [...load.flatMap((d) => ['-I', d]), '-rnet/http', '-rjson', '-e', code, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('close', (status) => {
      clearTimeout(timer);
      if (status === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`native ruby exited with ${status}: ${Buffer.concat(err).toString()}`));
    });
  });
}

/**
 * A listening TCP socket whose accept queue is full, so that a connect to it
 * hangs (for open timeouts). Held by a native ruby child process.
 */
export async function blackholePort() {
  const code = `
require 'socket'
s = Socket.new(:INET, :STREAM); s.bind(Addrinfo.tcp('127.0.0.1', 0)); s.listen(0)
port = s.local_address.ip_port
fill = 6.times.map { c = Socket.new(:INET, :STREAM); (c.connect_nonblock(Addrinfo.tcp('127.0.0.1', port)) rescue nil); c }
sleep 0.2
puts port; $stdout.flush
$stdin.read
`;
  const child = spawn('ruby', ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let s = '';
    child.stdout.on('data', (d) => {
      s += d;
      if (s.includes('\n')) resolve(Number(s.trim()));
    });
    child.on('error', reject);
    child.on('exit', () => reject(new Error('blackhole child exited')));
  });
  return {
    port,
    close: () => {
      child.stdin.end();
      child.kill('SIGKILL');
    },
  };
}

// ---- certificates ----

export { makeCerts, haveOpenssl } from '../certs.mjs';
