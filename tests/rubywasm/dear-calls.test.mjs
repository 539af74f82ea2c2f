// The steps of net/http that the package makes without the C calls that are
// dear in ruby.wasm (ruby/net_http_wasm/patches.rb, DearCalls; and
// Mutex/Monitor#synchronize, ruby/net_http_wasm/thread.rb): the same
// results and errors as net/http's own methods of the same VM, the
// 100-continue response net/http throws still caught, and a kept-alive
// request that makes none of those calls.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { VERSIONS, bootVM, rbJSON, listen, closeServer } from '../support/browser/harness.mjs';

// A server that answers a request's head at once, before any body (a
// server refusing an upload that asked for 100-continue), and then closes.
async function headAnswerServer(response) {
  const sockets = new Set();
  const received = [];
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    let buf = '';
    let answered = false;
    s.on('data', (d) => {
      buf += d.toString('latin1');
      received.push(d);
      if (!answered && buf.includes('\r\n\r\n')) {
        answered = true;
        s.end(response);
      }
    });
  });
  const port = await listen(server);
  return { port, received: () => Buffer.concat(received).toString('latin1'), close: () => closeServer(server, sockets) };
}

for (const version of VERSIONS) {
  describe(`net/http's steps without calls dear in ruby.wasm ${version}`, { timeout: 120000 }, () => {
    let vm;
    const servers = [];
    before(async () => {
      vm = await bootVM(version);
      installNetHttp(vm);
    });
    after(async () => {
      for (const s of servers) await s.close();
    });

    test("initialize_http_header: the same @header, errors and fallbacks as net/http's own", async () => {
      const r = await rbJSON(vm, `
        own = NetHttpWasm::DearCalls::Header::NET_HTTP[:initialize_http_header]
        holder = Class.new { include Net::HTTPHeader; attr_reader :header }
        sub = Class.new(Hash)
        own_each = Class.new(Hash) { def each = yield('from-each', 'v') && self }
        own_keys = Class.new(Hash) { def keys = ['other'] }
        single = { 'a' => 'b' }
        def single.each = yield('from-singleton', 'v') && self
        ident = {}.compare_by_identity
        ident[+'x-a'] = '1'
        ident[+'x-a'] = '2'
        cases = [
          nil, {}, { 'Accept' => ' text/html ' }, { 'a' => 'b', 'A' => 'c' }, { sym: 'v', 'X-Up' => "\\tup\\t" },
          { 'n' => nil, 'k' => 'v' }, { 'i' => 1 }, { 1 => 'x' }, { 'crlf' => "a\\r\\nb" }, { 'lf' => "a\\nb" },
          { 'cr' => "a\\rb" }, { 'trail' => "v\\r\\n" }, { 'long' => 'x' * 70_000 }, { ('k' * 2000) => 'v' },
          { :"#{'s' * 2000}" => 'v' }, { 'bad' => "\\xff ".dup.force_encoding('UTF-8') }, { 'utf' => ' ü ' },
          { 'frozen' => 'v'.freeze }, sub[{ 'from' => 'subclass' }], ident,
          own_each[{ 'a' => 'b' }], own_keys[{ 'a' => 'b' }], single,
        ]
        walks = [{ 'a' => 'b' }, sub[{ 'a' => 'b' }], own_each.new, own_keys.new, single].map { |h| NetHttpWasm::DearCalls::Header.plain_walk?(h) }
        run = lambda do |m, h|
          o = holder.allocate
          v = begin
            m.bind_call(o, h)
            o.header
          rescue Exception => e
            [e.class.name, e.message]
          end
          v
        end
        ours = Net::HTTPHeader.instance_method(:initialize_http_header)
        require 'stringio'
        verbose = begin
          $VERBOSE = true
          err = $stderr
          out = [ours, own].map do |m|
            $stderr = StringIO.new
            [run.(m, { 'n' => nil, 'd' => 'x', 'D' => 'y' }), $stderr.string.gsub(/^.*?warning: /, '')]
          end
          out
        ensure
          $stderr = err
          $VERBOSE = false
        end
        {
          'replaced' => ours.source_location[0].end_with?('patches.rb'),
          'ours' => cases.map { |h| run.(ours, h) },
          'net_http' => cases.map { |h| run.(own, h) },
          'verbose' => verbose,
          'walks' => walks,
        }`);
      assert.equal(r.replaced, true);
      assert.deepEqual(r.ours, r.net_http);
      assert.deepEqual(r.verbose[0], r.verbose[1]);
      // a Hash, or one of a subclass that walks as Hash does, is walked here; one of its own each, keys or values is not
      assert.deepEqual(r.walks, [true, true, false, false, false]);
      assert.deepEqual(r.net_http.slice(-3), [{ 'from-each': ['v'] }, { a: ['b'] }, { 'from-singleton': ['v'] }]);
      // (what net/http does with them)
      assert.deepEqual(r.net_http[2], { accept: ['text/html'] });
      assert.deepEqual(r.net_http[3], { a: ['c'] });
      assert.deepEqual(r.net_http[5], { k: ['v'] });
      assert.equal(r.net_http[8][0], 'ArgumentError');
      assert.match(r.verbose[1][1], /nil HTTP header: n/);
      assert.match(r.verbose[1][1], /duplicated HTTP header: D/);
    });

    test("connection_close? and connection_keep_alive?: net/http's answers", async () => {
      const r = await rbJSON(vm, `
        own = NetHttpWasm::DearCalls::Header::NET_HTTP
        holder = Class.new { include Net::HTTPHeader; def initialize(h) = (@header = h) }
        values = [nil, ['close'], ['Close'], ['keep-alive'], ['Keep-Alive, close'], ['closed'], ['x,close'], ['close ,x'],
                  ['upgrade', 'close'], ['keep-alive ,upgrade'], ['keepalive'], [], ['a', 'b']]
        headers = values.product(values).map { |c, p| { 'connection' => c, 'proxy-connection' => p }.compact }
        %i[connection_close? connection_keep_alive?].to_h do |m|
          ours = Net::HTTPHeader.instance_method(m)
          [m, [ours.source_location[0].end_with?('patches.rb'), headers.map { |h| [ours, own[m]].map { |u| u.bind_call(holder.new(h)) } }]]
        end`);
      for (const [name, [replaced, pairs]] of Object.entries(r)) {
        assert.equal(replaced, true, name);
        assert.equal(pairs.length, 169, name);
        for (const [i, [ours, theirs]] of pairs.entries()) assert.equal(ours, theirs, `${name} #${i}`);
        assert.ok(pairs.some(([v]) => v === true) && pairs.some(([v]) => v === false), name);
      }
    });

    test('a kept-alive request makes no Kernel#catch, Hash#each or Enumerable#grep call', async () => {
      const server = net.createServer((s) => {
        s.on('error', () => {});
        let buf = '';
        s.on('data', (d) => {
          buf += d.toString('latin1');
          while (buf.includes('\r\n\r\n')) {
            buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
            s.write('HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok');
          }
        });
      });
      const sockets = new Set();
      server.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      const port = await listen(server);
      servers.push({ close: () => closeServer(server, sockets) });
      const r = await rbJSON(vm, `
        calls = Hash.new(0)
        tp = TracePoint.new(:c_call) { |t| calls["#{t.defined_class}##{t.method_id}"] += 1 if %i[catch each grep].include?(t.method_id) }
        bodies = Net::HTTP.start('127.0.0.1', ${port}) do |h|
          h.get('/warm')
          tp.enable { Array.new(3) { |i| h.request(Net::HTTP::Get.new("/#{i}")).body } }
        end
        [bodies, calls]`);
      assert.deepEqual(r[0], ['ok', 'ok', 'ok']);
      assert.deepEqual(r[1], {});
    });

    test('Mutex#synchronize and Monitor#synchronize run their block with no C method between (the result is Ruby\'s: tests/support/threads/scenarios.mjs)', async () => {
      const r = await rbJSON(vm, `
        require 'monitor'
        m = Mutex.new
        mon = Monitor.new
        calls = Hash.new(0)
        tp = TracePoint.new(:c_call) { |t| calls["#{t.defined_class}##{t.method_id}"] += 1 if t.method_id == :synchronize }
        got = tp.enable { [m.synchronize { m.owned? }, mon.synchronize { mon.synchronize { mon.mon_owned? } }] }
        [got, calls, m.locked?, mon.mon_locked?]`);
      assert.deepEqual(r, [[true, true], {}, false, false]);
    });

    test("a response net/http throws (Expect: 100-continue refused) is still the request's answer; so is a throw of :response from elsewhere", async () => {
      const srv = await headAnswerServer('HTTP/1.1 417 Expectation Failed\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope');
      servers.push(srv);
      const other = await headAnswerServer('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      servers.push(other);
      const r = await rbJSON(vm, `
        refused = Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
          h.continue_timeout = 5
          req = Net::HTTP::Post.new('/upload', 'Expect' => '100-continue')
          req.body = 'the body'
          res = h.request(req)
          [res.code, res.message, res.body]
        end
        thrower = Class.new(Net::HTTP::Get) do
          def exec(*)
            res = Net::HTTPOK.new('1.1', '200', 'Thrown')
            res.instance_variable_set(:@read, true)
            res.instance_variable_set(:@body, 'from a throw')
            throw :response, res
          end
        end
        thrown = Net::HTTP.start('127.0.0.1', ${other.port}) { |h| res = h.request(thrower.new('/')); [res.message, res.body] }
        other_tag = begin
          Net::HTTP.start('127.0.0.1', ${other.port}) { |h| h.send(:catch, :mine) { |t| throw t, 'own tag' } }
        end
        [refused, thrown, other_tag]`);
      assert.deepEqual(r[0], ['417', 'Expectation Failed', 'nope']);
      assert.ok(!srv.received().includes('the body'), 'the body was not sent');
      assert.deepEqual(r[1], ['Thrown', 'from a throw']);
      assert.equal(r[2], 'own tag');
    });
  });
}
