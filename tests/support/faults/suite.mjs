// The fault scenarios (scenarios.rb) against the chaos server (server.mjs),
// run by native MRI with the net/http sources of one ruby.wasm version and
// by Net::HTTP in that version's VM with both Node transports (waiting:
// vm.evalAsync; blocking: vm.eval). Per scenario, ours must equal MRI's:
// exception class and message, responses, and the connections and requests
// the server saw (retries). KNOWN lists the differences a host cannot
// remove (README, "Faults"), asserted as they are.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { installNetHttp } from '../../../js/ruby/node.mjs';
import { bootVM, haveNativeRuby } from '../browser/harness.mjs';
import { startChaos } from '../chaos/index.mjs';
import { netHttpSources, mriVersion, runMri, wasmRunner, scenarioNames, normalize } from './index.mjs';

// Node's TLS does not say whether a peer sent close_notify before closing;
// OpenSSL in MRI raises on a close without it (SSL_read: unexpected eof).
// Ours reads a clean end of stream there.
export const KNOWN = {
  'tls get drop-body': {
    mri: { responses: [], error: ['OpenSSL::SSL::SSLError', 'SSL_read: unexpected eof while reading'] },
    mriConnections: 2,
    ours: { responses: [['200', 'x'.repeat(50)]], error: null },
    oursConnections: 1,
  },
  'tls idle drop while sleeping': {
    mri: { responses: [['200', 'first']], error: ['OpenSSL::SSL::SSLError', 'SSL_read: unexpected eof while reading'] },
    mriConnections: 1,
    ours: { responses: [['200', 'first'], ['200', 'POST 4 2e39a2']], error: null },
    oursConnections: 2,
  },
};

const NET_HTTP = { '4.0': '0.9.1', '3.4': '0.6.0' };

export function faultSuite(version) {
  const skip = !haveNativeRuby() ? 'no native ruby' : false;
  describe(`connection faults: ruby.wasm ${version} vs native MRI with net-http ${NET_HTTP[version]}`, { skip, timeout: 600000 }, () => {
    let chaos;
    let env;
    let src;
    let names;
    const runners = {};
    const table = [];

    before(async () => {
      chaos = await startChaos();
      env = { ...chaos.ports, ca: chaos.certPath };
      src = await netHttpSources(version);
      names = await scenarioNames();
      for (const mode of ['waiting', 'blocking']) {
        const vm = await bootVM(version);
        const handle = installNetHttp(vm, { blocking: mode === 'blocking' });
        runners[mode] = { handle, run: wasmRunner(vm, mode === 'blocking') };
      }
    });

    after(async () => {
      for (const r of Object.values(runners)) await r.handle.uninstall();
      if (chaos) chaos.close();
      if (src) src.cleanup();
      if (process.env.NETHTTP_FAULTS_TABLE) console.log(table.join('\n'));
    });

    test('native MRI loads the net/http sources ruby.wasm bundles', async () => {
      assert.equal(await mriVersion(src.dir), NET_HTTP[version]);
      assert.ok(names.length >= 50, `${names.length} scenarios`);
    });

    // one run: the result and what the server saw
    async function observe(run, name) {
      await chaos.stats(true);
      const result = normalize(await run(name, env));
      // a request written just before an error that was already buffered
      // (garbage after a response) may still be on its way to the server
      await new Promise((r) => setTimeout(r, 30));
      const { connections, requests } = await chaos.stats(true);
      await chaos.drop();
      return { result, connections, requests };
    }

    test('every scenario', async (t) => {
      for (const name of names) {
        await t.test(name, { timeout: 30000 }, async () => {
          const mri = await observe((n, e) => runMri(src.dir, n, e), name);
          const known = KNOWN[name];
          if (known) {
            assert.deepEqual(mri.result, known.mri, 'MRI');
            assert.equal(mri.connections, known.mriConnections, 'MRI connections');
          }
          const line = [`| ${name} | ${show(mri)} |`];
          for (const mode of ['waiting', 'blocking']) {
            const { handle, run } = runners[mode];
            const ours = await observe(run, name);
            line.push(` ${show(ours)} |`);
            assert.equal(handle.bridge.conns.size, 0, `${mode}: connections left open in the bridge`);
            if (known) {
              assert.deepEqual(ours.result, known.ours, mode);
              assert.equal(ours.connections, known.oursConnections, `${mode}: connections`);
              continue;
            }
            assert.deepEqual(ours.result, mri.result, `${mode}: result`);
            assert.equal(ours.connections, mri.connections, `${mode}: connections opened`);
            assert.deepEqual(ours.requests, mri.requests, `${mode}: requests received`);
          }
          table.push(line.join(''));
        });
      }
    });
  });
}

function show({ result, connections, requests }) {
  const what = result.error ? `${result.error[0]}: ${result.error[1]}` : result.responses.map((r) => r.join(' ')).join('; ');
  const shown = result.error && result.responses.length ? `${result.responses.map((r) => r.join(' ')).join('; ')}; ${what}` : what;
  return `${shown.replace(/\|/g, '\\|')} (${connections} conn, ${requests.length} req)`;
}
