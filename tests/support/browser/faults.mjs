// The browser transports' fault scenarios (tests/browser/faults.test.mjs
// over fetch(), worker.test.mjs over synchronous XMLHttpRequest,
// stream.test.mjs over the streamed transport), against the chaos server
// (tests/support/chaos/).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

export const READ_TIMEOUT = 0.5;

// One request that meets the fault, then one on the same Net::HTTP object
// that must succeed: { error: [class, message], socketError, timeoutError,
// response, after, seconds, conns (the bridge's, after the fault) }.
export const faultScenario = (port, method, path) => `
  h = Net::HTTP.new('127.0.0.1', ${port})
  h.read_timeout = ${READ_TIMEOUT}
  h.open_timeout = 2
  out = {}
  h.start do
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    begin
      req = Net::HTTP::${method === 'POST' ? 'Post' : 'Get'}.new(${JSON.stringify(path)})
      req.body = 'body' if req.request_body_permitted?
      res = h.request(req)
      out[:response] = [res.code, res.body]
    rescue => e
      out[:error] = [e.class.name, e.message]
      out[:socketError] = e.is_a?(SocketError)
      out[:timeoutError] = e.is_a?(Timeout::Error)
    end
    out[:seconds] = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t
    out[:conns] = NetHttpWasm.bridge[:conns][:size].to_i
    # (the answer that must come: a busy machine may take longer than the fault's timeout)
    h.read_timeout = 10
    res = h.request(Net::HTTP::Get.new('/ok?body=again'))
    out[:after] = [res.code, res.body]
  end
  out`;

/**
 * Runs faultScenario through rb (code → its value, parsed from JSON) and
 * returns [result, what] with the chaos server's count of the requests and
 * its open sockets. Each scenario starts with the connection the last one
 * kept alive. Checked for every fault: the bridge let go of the
 * connection, the same Net::HTTP works again, and the browser closed the
 * faulted sockets (only the one kept alive after the last answer is open).
 */
export async function runFault(chaos, rb, method, path) {
  await chaos.stats(true);
  const r = await rb(faultScenario(chaos.ports.plain, method, path));
  await sleep(200);
  const st = await chaos.stats();
  r.requests = st.requests.filter((q) => q === `${method} ${path}`).length;
  r.open = st.open;
  if (process.env.NETHTTP_FAULTS_LOG) console.log(method, path, JSON.stringify(r));
  const what = `${method} ${path}: ${JSON.stringify(r)}`;
  assert.equal(r.conns, 0, what);
  assert.deepEqual(r.after, ['200', 'again'], what);
  assert.equal(r.open, 1, what);
  return [r, what];
}
