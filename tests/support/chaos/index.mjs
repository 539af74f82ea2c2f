// Starts the chaos server (server.mjs) in a child process and talks to it
// over IPC: used by the fault tests and the soak benchmark.
import { fork } from 'node:child_process';
import { makeCerts, haveOpenssl } from '../certs.mjs';

const SERVER = new URL('./server.mjs', import.meta.url);

/**
 * Starts the chaos server (`cors`: its responses readable by any page's
 * fetch()). { ports: { plain, tls?, stall, alert }, certPath,
 * stats(reset) → { connections, requests, open }, drop(), close() }.
 */
export async function startChaos({ tls = true, cors = false } = {}) {
  const certs = tls && haveOpenssl() ? makeCerts() : null;
  const arg = JSON.stringify({ ...(certs && { key: certs.key.toString(), cert: certs.cert.toString() }), cors });
  const child = fork(SERVER, [arg], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 1;
  const ready = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`chaos server exited with ${code}`)));
    child.on('message', (m) => {
      if (m.ready) resolve(m.ports);
      else if (pending.has(m.id)) {
        pending.get(m.id)(m);
        pending.delete(m.id);
      }
    });
  });
  const ports = await ready;
  const ask = (msg) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ ...msg, id });
    });
  return {
    ports,
    certPath: certs && certs.certPath,
    /** The counts since the last reset; `reset` starts new ones. */
    stats: async (reset = false) => (await ask({ op: 'stats', reset })).stats,
    /** Closes every connection the server holds. */
    drop: () => ask({ op: 'drop' }),
    close() {
      child.disconnect();
      child.kill();
      if (certs) certs.cleanup();
    },
  };
}
