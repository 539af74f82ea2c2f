// Run under each host by tests/hosts/runtimes.test.mjs: a ruby.wasm VM made by
// createRubyVM, a GET on the waiting transport (vm.evalAsync) and on the
// blocking one (vm.eval), against the URL given as the last argument; TLS
// connections to the ports of NETHTTP_ALERT_PORTS (servers that answer with
// a TLS alert) on the waiting one; then whether dispose() left the VM's
// temporary folder behind.
import { existsSync } from 'node:fs';
import { createRubyVM } from 'net-http-wasm/ruby';

const url = process.argv[process.argv.length - 1];
const code = `require 'net/http'; r = Net::HTTP.get_response(URI(${JSON.stringify(url)})); [RUBY_VERSION, r.code, r['x-server'], r.body].join(' ')`;
const alertPorts = JSON.parse(process.env.NETHTTP_ALERT_PORTS || '[]');
const alerts = `require 'net/http'; ${JSON.stringify(alertPorts)}.map { |port| begin; Net::HTTP.start('127.0.0.1', port, use_ssl: true, verify_mode: OpenSSL::SSL::VERIFY_NONE, open_timeout: 5) { }; 'connected'; rescue => e; "#{e.class}: #{e.message}"; end }.join("\\n")`;
const out = { ruby: '4.0', left: [] };
for (const blocking of [false, true]) {
  const { vm, tmp, dispose } = await createRubyVM({ ruby: '4.0', blocking });
  try {
    out[blocking ? 'blocking' : 'waiting'] = (blocking ? vm.eval(code) : await vm.evalAsync(code)).toString();
    if (!blocking) out.alerts = (await vm.evalAsync(alerts)).toString().split('\n').filter(Boolean);
  } finally {
    await dispose();
  }
  if (existsSync(tmp)) out.left.push(tmp);
}
console.log(JSON.stringify(out));
