#!/usr/bin/env node
// Runs upstream net-http's own tests (test/net/http/*.rb of a ruby/net-http
// checkout) inside ruby.wasm, against the VM's own net/http, over
// createRubyVM's waiting (evalAsync) or blocking (vm.eval) transport, with
// Debian's test-unit and a checkout of test-unit-ruby-core (core_assertions).
// Nothing of those is copied here: the folders are mounted (by createRubyVM, which cannot make them read-only).
import { existsSync, statSync } from 'node:fs';
import { resolve, join } from 'node:path';

const HELP = `usage: node tools/upstream-nethttp.mjs NET_HTTP_CHECKOUT [options]

Runs NET_HTTP_CHECKOUT/test/net/http/test_*.rb inside ruby.wasm (the VM's own
net/http, not the checkout's lib/) and prints the counts test-unit gives
(tests, assertions, failures, errors, pendings, omissions) and each failing test
with the first line of why.

options:
  --ruby V           ruby.wasm version: 4.0 (default) or 3.4 (any createRubyVM takes)
  --transport T      waiting (vm.evalAsync, default) or blocking (vm.eval)
  --core-assertions DIR  a checkout of ruby/test-unit-ruby-core (its lib/ is mounted)
  --test-unit DIR    test-unit's lib/, for a VM that bundles none (default: Debian's
                     test-unit-3.5.3; ruby.wasm 4.0 bundles 3.6.2)
  --power-assert DIR power_assert's lib/ (default: Debian's power_assert-2.0.1)
  --only FILE,...    only these test files (names under test/net/http)
  --help             this text

net-http's tag per VM: 4.0 has net-http 0.9.1, 3.4 has 0.6.0.`;

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
  console.log(HELP);
  process.exit(argv.length === 0 ? 2 : 0);
}
const opts = { ruby: '4.0', transport: 'waiting', testUnit: '/usr/lib/ruby/gems/3.1.0/gems/test-unit-3.5.3/lib',
  powerAssert: '/usr/lib/ruby/gems/3.1.0/gems/power_assert-2.0.1/lib', core: null, only: null, checkout: null };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => {
    if (i + 1 >= argv.length) die(`${a} needs a value`);
    return argv[++i];
  };
  if (a === '--ruby') opts.ruby = val();
  else if (a === '--transport') opts.transport = val();
  else if (a === '--core-assertions') opts.core = val();
  else if (a === '--test-unit') opts.testUnit = val();
  else if (a === '--power-assert') opts.powerAssert = val();
  else if (a === '--only') opts.only = val().split(',').filter(Boolean);
  else if (a.startsWith('-')) die(`unknown option ${a} (see --help)`);
  else if (opts.checkout) die(`one checkout only (got ${opts.checkout} and ${a})`);
  else opts.checkout = a;
}
function die(msg) {
  console.error(`upstream-nethttp: ${msg}`);
  process.exit(2);
}
function dir(what, p) {
  if (!p) die(`${what} is required (see --help)`);
  const abs = resolve(p);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) die(`${what}: ${abs} is not a folder`);
  return abs;
}
if (!['waiting', 'blocking'].includes(opts.transport)) die(`--transport: 'waiting' or 'blocking', not '${opts.transport}'`);
const checkout = dir('the net-http checkout', opts.checkout);
const tests = dir('the checkout\'s test/ folder', join(checkout, 'test'));
dir('test/net/http in the checkout', join(tests, 'net/http'));
const core = join(dir('--core-assertions', opts.core), 'lib');
dir('--core-assertions lib/', core);
const testUnit = dir('--test-unit', opts.testUnit);
const powerAssert = dir('--power-assert', opts.powerAssert);

const { createRubyVM } = await import('../js/ruby/node.mjs');
const { vm, dispose } = await createRubyVM({
  ruby: opts.ruby, blocking: opts.transport === 'blocking',
  mounts: { '/upstream': tests, '/test-unit': testUnit, '/power-assert': powerAssert, '/core-assertions': core },
});
const only = opts.only ? JSON.stringify(opts.only) : 'nil';
const code = `
$stdout.sync = true
$LOAD_PATH.unshift '/core-assertions', '/upstream/lib'
$LOAD_PATH.push '/power-assert', '/test-unit'   # used only where the VM bundles no test-unit
require 'net/http'
puts "ruby #{RUBY_VERSION}, net-http #{Net::HTTP::VERSION}, transport ${opts.transport}"
require 'test/unit'
require 'test/unit/version'
puts "test-unit #{Test::Unit::VERSION} (#{$LOADED_FEATURES.grep(%r{/test/unit/version}).first})"
Test::Unit::AutoRunner.need_auto_run = false
require 'helper'
only = ${only}
Dir['/upstream/net/http/test_*.rb'].sort.each do |f|
  next if only && !only.include?(File.basename(f))
  begin
    require f
  rescue Exception => e
    puts "LOAD #{File.basename(f)}: #{e.class}: #{e.message.lines.first&.chomp}"
  end
end
require 'test/unit/collector/descendant'
require 'test/unit/ui/console/testrunner'
suite = Test::Unit::Collector::Descendant.new.collect('upstream net-http')
r = Test::Unit::UI::Console::TestRunner.run(suite, output_level: Test::Unit::UI::Console::OutputLevel::NORMAL, use_color: false)
"#{r.run_count} tests, #{r.assertion_count} assertions, #{r.failure_count} failures, #{r.error_count} errors, #{r.pending_count} pendings, #{r.omission_count} omissions|#{r.passed?}"
`;
let status = 0;
let summary = null;
try {
  const v = opts.transport === 'blocking' ? vm.eval(code) : await vm.evalAsync(code);
  const [counts, passed] = v.toString().split('|');
  summary = counts;
  if (passed !== 'true') status = 1;
} catch (e) {
  console.log(`the run raised: ${String(e.message || e).split('\n')[0]}`);
  status = 3;
} finally {
  await dispose();
}
console.log(`summary (ruby ${opts.ruby}, ${opts.transport}): ${summary || 'none printed'}`);
process.exit(summary ? status : 3);
