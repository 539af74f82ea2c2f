// Run by tests/hosts/rubywasm-versions.test.mjs in a process of its own:
// `node versions.mjs RUBY BASE_URL`. A VM of createRubyVM({ ruby: RUBY })
// on each transport: its RUBY_VERSION, net-http version and profile, a GET
// of BASE_URL/ok and of a response whose head is 1.1 MiB (BASE_URL/big-head)
// through the codec; on the blocking transport (vm.eval) that head, and
// requests with a 70,000-byte field value and a 1,100-byte field name,
// through the codec and through net/http's own code (NetHttpWasm.codec =
// false) in the same VM.
// Then threads that wait many times at once (fibers of the package's
// scheduler: ruby.wasm 3.2's overflowed their stacks on the non-local exits
// of Kernel#loop) and requests of their own. (Each step is a call of its
// own, so that one that fails does not hide the next.)
import { createRubyVM } from 'net-http-wasm/ruby';

const [ruby, base] = process.argv.slice(2);
const prelude = `
  require 'net/http'
  require 'json'
  def nhw_try
    yield
  rescue => e
    [e.class.name, e.message]
  end
  $nhw_u = URI(${JSON.stringify(base)})
  nil
`;
const steps = {
  version: 'RUBY_VERSION',
  net_http: 'Net::HTTP::VERSION',
  profile: 'NetHttpWasm.profile',
  get: "nhw_try { r = Net::HTTP.get_response($nhw_u + '/ok'); [r.code, r.body] }",
  big_head: "nhw_try { Net::HTTP.get_response($nhw_u + '/big-head').code }",
  long_response_value: "nhw_try { Net::HTTP.get_response($nhw_u + '/long-value').code }",
  long_value: "nhw_try { req = Net::HTTP::Get.new('/ok', 'X-Long' => 'x' * 70_000); Net::HTTP.start($nhw_u.host, $nhw_u.port) { |h| h.request(req).body } }",
  long_name: "nhw_try { req = Net::HTTP::Get.new('/ok', 'X' * 1_100 => 'v'); Net::HTTP.start($nhw_u.host, $nhw_u.port) { |h| h.request(req).body } }",
  threads: `nhw_try do
    NetHttpWasm::Scheduler.run { 3.times { Fiber.schedule { 100.times { sleep 0.001 } } } }
    20.times.map { Thread.new { 10.times { sleep 0.001 }; Net::HTTP.get($nhw_u + '/ok') } }.map(&:value).tally
  end`,
};
const out = {};
for (const blocking of [false, true]) {
  const { vm, dispose } = await createRubyVM({ ruby, blocking });
  const run = async (code) => JSON.parse((blocking ? vm.eval(`(${code}).to_json`) : await vm.evalAsync(`(${code}).to_json`)).toString());
  try {
    vm.eval(prelude);
    const r = {};
    for (const [name, code] of Object.entries(steps)) {
      if (['version', 'net_http', 'profile', 'get', 'threads'].includes(name)) r[name] = await run(code);
      else if (name === 'big_head' || name === 'long_response_value' || blocking) {
        r[name] = [];
        for (const codec of blocking ? [true, false] : [true]) {
          vm.eval(`NetHttpWasm.codec = ${codec}`);
          r[name].push(await run(code));
        }
        vm.eval('NetHttpWasm.codec = true');
      }
    }
    out[blocking ? 'blocking' : 'waiting'] = r;
  } finally {
    await dispose();
  }
}
console.log(JSON.stringify(out));
