// The JS side of a client process (node-client.mjs, rubywasm-client.mjs):
// commands from run.mjs arrive as JSON lines on stdin, answers go back as
// JSON lines on file descriptor 3 (stdout and stderr stay free for whatever
// the client libraries print). mri-client.rb speaks the same protocol.
//
//   {"op":"setup","url":…,"modes":["oneoff","persistent"],"ca":path|null}
//     → {"modes":{"oneoff":null,"persistent":"reason it is not available"},"version":…}
//   {"op":"run","mode":"oneoff","counts":[…],"expect":{"len":…,"sha256":…}}
//     → {"ok":…,"errors":{"message":count},"wallMs":…,"cpuMs":…,"latMs":[…]}
//
// A client is { setup(url, modes, ca) → {modes, version}, run(mode, counts, expect) → {ok, errors, latMs} }
// where counts[i] is how many requests lane i makes one after the other,
// and optionally close(), awaited once stdin closes, before the process ends.
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { createWriteStream } from 'node:fs';

/** Short text for an error, the key it is counted under. */
export function errorKey(e) {
  const code = e && e.code ? `${e.code}: ` : '';
  const name = e && e.name && !code ? `${e.name}: ` : '';
  const cause = e && e.cause && e.cause.message ? ` (${e.cause.code ? `${e.cause.code}: ` : ''}${e.cause.message})` : '';
  return `${code}${name}${(e && e.message) || String(e)}${cause}`.slice(0, 200);
}

/**
 * Counts the answers of one run: a request is OK when its status is 200 and
 * its body has the expected length and sha256. The last good body is kept,
 * so the hash is computed only for bodies that differ from it.
 */
export class Tally {
  constructor(expect) {
    this.expect = expect;
    this.good = null;
    this.ok = 0;
    this.errors = {};
    this.latMs = [];
  }

  answer(status, body, ms) {
    this.latMs.push(ms);
    if (status !== 200) return this.fail(`status ${status}`);
    const b = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (this.good && b.equals(this.good)) return this.ok++;
    if (b.length !== this.expect.len) return this.fail(`body of ${b.length} bytes, expected ${this.expect.len}`);
    if (createHash('sha256').update(b).digest('hex') !== this.expect.sha256) return this.fail('body differs (sha256)');
    this.good = Buffer.from(b);
    this.ok++;
  }

  error(e, ms) {
    this.latMs.push(ms);
    this.fail(errorKey(e));
  }

  fail(key) {
    this.errors[key] = (this.errors[key] || 0) + 1;
  }

  result() {
    return { ok: this.ok, errors: this.errors, latMs: this.latMs };
  }
}

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Serves run.mjs's commands with a client until stdin closes. */
export function serve(client) {
  const out = createWriteStream(null, { fd: 3 });
  const reply = (obj) => out.write(`${JSON.stringify(obj)}\n`);
  const rl = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  rl.on('line', (line) => {
    queue = queue.then(async () => {
      const cmd = JSON.parse(line);
      if (cmd.op === 'setup') {
        reply(await client.setup(cmd.url, cmd.modes, cmd.ca));
      } else if (cmd.op === 'run') {
        const c0 = cpuMs();
        const t0 = performance.now();
        const r = await client.run(cmd.mode, cmd.counts, cmd.expect);
        const wallMs = performance.now() - t0;
        reply({ ...r, wallMs, cpuMs: cpuMs() - c0 });
      }
    }).catch((e) => {
      reply({ fatal: errorKey(e) });
    });
  });
  // (a close that fails is reported; the results are out already)
  rl.on('close', () => queue.then(() => client.close?.()).catch((e) => console.error(`close: ${errorKey(e)}`)).finally(() => out.end(() => process.exit(0))));
}
