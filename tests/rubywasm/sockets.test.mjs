// Ruby's socket API inside ruby.wasm (TCPSocket, Socket, Addrinfo,
// IO.select, OpenSSL::SSL::SSLSocket) over host sockets: each scenario is
// run by native MRI (Debian's ruby) and by ruby.wasm 4.0 and 3.4 over both
// Node transports, against the same local servers (in a child process, so
// that the blocking transport can reach them), and what each prints is
// compared: values, exception classes and messages. TLS certificates are
// made at run time.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createRubyVM } from '../../js/ruby/node.mjs';
import { haveNativeRuby } from '../support/native-ruby.mjs';
import { makeCerts, haveOpenssl } from '../support/certs.mjs';
import { VERSIONS, fiberCertTrap } from '../support/rubywasm.mjs';

const TRANSPORTS = [['blocking', true], ['waiting', false]];
const skip = !haveNativeRuby() ? 'native ruby is not installed' : !haveOpenssl() ? 'openssl is not installed' : false;

// The servers: http (one response per request, kept alive), echo (answers
// PING with PONG; at the client's half-close, the count of bytes it got),
// lines (lines in two writes, then the end), tls (HTTP over TLS with the
// certificate for localhost), other (TLS, a certificate for other.test),
// clientCert (TLS, wants a client certificate), silent (accepts, never
// writes).
const SERVERS = `
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
const httpish = (s) => {
  let buf = '';
  s.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\\r\\n\\r\\n')) >= 0) {
      const head = buf.slice(0, i);
      buf = buf.slice(i + 4);
      const path = head.split(' ')[1];
      const body = 'hello ' + path;
      const close = /connection: close/i.test(head) || head.includes('HTTP/1.0');
      s.write('HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nContent-Length: ' + body.length + '\\r\\n' + (close ? 'Connection: close\\r\\n' : '') + '\\r\\n' + body);
      if (close) s.end();
    }
  });
  s.on('error', () => {});
};
const servers = {
  http: net.createServer(httpish),
  echo: net.createServer({ allowHalfOpen: true }, (s) => {
    let n = 0;
    s.on('data', (d) => {
      n += d.length;
      if (String(d).includes('PING')) s.write('PONG\\n');
    });
    s.on('end', () => s.end('got ' + n + ' bytes\\n'));
    s.on('error', () => {});
  }),
  lines: net.createServer((s) => {
    s.write('one\\ntwo\\r\\nthree');
    setTimeout(() => s.end('\\nfour\\n'), 300);
    s.on('error', () => {});
  }),
  silent: net.createServer((s) => s.on('error', () => {})),
  tls: tls.createServer({ key: readFileSync(process.env.KEY), cert: readFileSync(process.env.CERT) }, httpish),
  // a certificate for other.test only
  other: tls.createServer({ key: readFileSync(process.env.OTHER_KEY), cert: readFileSync(process.env.OTHER_CERT) }, httpish),
  // wants a client certificate (TLS 1.3: the client learns it when it reads)
  clientCert: tls.createServer({ key: readFileSync(process.env.KEY), cert: readFileSync(process.env.CERT), requestCert: true, rejectUnauthorized: true, ca: [readFileSync(process.env.CERT)] }, httpish),
};
for (const name of ['tls', 'other', 'clientCert']) servers[name].on('tlsClientError', () => {});
const ports = {};
for (const [name, s] of Object.entries(servers)) {
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  ports[name] = s.address().port;
}
console.log(JSON.stringify(ports));
`;

// A port whose queue of connections is full (a listen(0) socket that never
// accepts, its one place taken): a connect to it times out.
const FULL = `
require 'socket'
s = Socket.new(:INET, :STREAM); s.bind(Addrinfo.tcp('127.0.0.1', 0)); s.listen(0)
port = s.local_address.ip_port
held = []
begin
  loop { held << Socket.tcp('127.0.0.1', port, connect_timeout: 0.2) }
rescue Errno::ETIMEDOUT
end
puts port
$stdout.flush
$stdin.read
`;

// Each scenario prints with `p`; ENV: the servers' PORTS (JSON), FULL, CA.
const SCENARIOS = {
  'the seed: TCPSocket.open, write, read, close': `
    s = TCPSocket.open '127.0.0.1', PORTS['http']
    s.write "GET /seed HTTP/1.1\\r\\nHost: a\\r\\nConnection: close\\r\\n\\r\\n"
    data = s.read
    s.close
    p data, data.encoding == Encoding::BINARY, s.closed?, s.close`,
  'a kept-alive raw socket: two requests, heads by gets, bodies by read(n)': `
    s = TCPSocket.new('127.0.0.1', PORTS['http'])
    2.times do |i|
      s.print "GET /k#{i} HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n"
      head = []
      while (line = s.gets) != "\\r\\n"
        head << line.chomp
      end
      n = head.find { |l| l.start_with?('Content-Length') }.split(': ')[1].to_i
      p head, s.read(n)
    end
    s.close`,
  'partial and non-blocking reads, gets, eof?, EOFError': `
    s = TCPSocket.new('127.0.0.1', PORTS['lines'])
    p s.gets, s.gets(chomp: true), s.readpartial(2)
    # (the rest comes 300 ms later)
    p s.read_nonblock(10, exception: false), s.read_nonblock(10, exception: false)
    begin; s.read_nonblock(10); rescue IO::WaitReadable => e; p [e.class, e.message]; end
    p s.wait_readable(5).equal?(s), s.each_line.to_a, s.eof?, s.read, s.read(3), s.read(0)
    begin; s.readpartial(3); rescue => e; p [e.class, e.message]; end
    p s.read_nonblock(3, exception: false)
    begin; s.read_nonblock(3); rescue => e; p [e.class, e.message]; end
    s.close
    begin; s.read; rescue => e; p [e.class, e.message]; end`,
  'IO.select over sockets': `
    a = TCPSocket.new('127.0.0.1', PORTS['echo'])
    b = TCPSocket.new('127.0.0.1', PORTS['echo'])
    p IO.select([a, b], nil, nil, 0.1)
    b << "PING\\n"
    r, w, e = IO.select([a, b], nil, nil, 5)
    p r.map { |x| x.equal?(b) }, w, e
    p b.readpartial(100), IO.select([a, b], [a], nil, 1).map(&:size)
    a.close; b.close`,
  'a refused connect': `
    [-> { TCPSocket.new('127.0.0.1', PORTS['refused']) }, -> { Socket.tcp('127.0.0.1', PORTS['refused']) }].each do |f|
      begin; f.call; rescue SystemCallError => e; p [e.class, e.message]; end
    end`,
  'names a socket call refuses: a NUL byte, a name with no address': `
    [-> { TCPSocket.new("a\\0b", 80) }, -> { TCPSocket.new('127.0.0.1', PORTS['http'], "a\\0b") },
     -> { TCPSocket.new('127.0.0.1', "8\\0") }, -> { TCPServer.new("a\\0b", 0) }, -> { Socket.tcp("a\\0b", 80) },
     -> { Addrinfo.tcp("a\\0b", 80) }, -> { IPSocket.getaddress("a\\0b") }, -> { Socket.getaddrinfo("a\\0b", 80) },
     -> { Net::HTTP.new("a\\0b", 80).get('/') },
     -> { h = Net::HTTP.new('127.0.0.1', PORTS['http']); h.local_host = "a\\0b"; h.get('/') }].each do |f|
      begin; f.call; p :no_error; rescue => e; p [e.class, e.message]; end
    end
    # (3.1 says "getaddrinfo: ", 3.3 and later "getaddrinfo(3): ", with Socket::ResolutionError)
    [-> { TCPServer.new('nonexistent.invalid', 0) }, -> { TCPServer.new('300.1.1.1', 0) },
     -> { TCPSocket.new('nonexistent.invalid', 80) }].each do |f|
      begin; f.call; p :no_error; rescue SocketError => e; p [:resolve, e.message.sub(/\\Agetaddrinfo(?:\\(3\\))?: /, '')]; end
    end`,
  'a connect that times out': `
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    begin; TCPSocket.new('127.0.0.1', FULL, connect_timeout: 0.3); rescue => e; p [e.class, e.message]; end
    begin; Socket.tcp('127.0.0.1', FULL, connect_timeout: 0.3); rescue => e; p [e.class, e.message]; end
    p (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t).between?(0.55, 3)`,
  'half-close: close_write, then the answer read to its end': `
    s = TCPSocket.new('127.0.0.1', PORTS['echo'])
    s.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
    p s.getsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY).int != 0, s.getsockopt(:SOCKET, :KEEPALIVE).bool
    s.setsockopt(:SOCKET, :KEEPALIVE, true)
    p s.getsockopt(Socket::SOL_SOCKET, Socket::SO_KEEPALIVE).bool
    p s.peeraddr[1] == PORTS['echo'], s.peeraddr[0], s.addr[2], s.remote_address.ip_address
    s.write 'abc', 'de'
    s << 'f'
    s.close_write
    begin; s.write 'x'; rescue => e; p [e.class, e.message]; end
    p s.read, s.closed?
    s.close`,
  'Socket.new, connect_nonblock, Addrinfo, Socket.tcp with a block': `
    a = Addrinfo.getaddrinfo('127.0.0.1', PORTS['http'], nil, :STREAM).first
    p a, [a.pfamily, a.socktype, a.protocol, a.ip_address, a.ip_port == PORTS['http']]
    so = Socket.new(a.pfamily, a.socktype, a.protocol)
    sa = Socket.sockaddr_in(PORTS['http'], '127.0.0.1')
    begin
      so.connect_nonblock(sa)
    rescue IO::WaitWritable => e
      p e.class
      p IO.select(nil, [so], nil, 5)[1].size
      p so.connect_nonblock(sa)
    end
    so.write "GET /z HTTP/1.0\\r\\n\\r\\n"
    p so.read[/hello.*/]
    so.close
    p Socket.tcp('127.0.0.1', PORTS['http']) { |t| t.write "GET /y HTTP/1.0\\r\\n\\r\\n"; [t.class, t.read[/hello.*/]] }
    p Addrinfo.tcp('127.0.0.1', 80), IPSocket.getaddress('127.0.0.1'), Socket.unpack_sockaddr_in(Socket.sockaddr_in(81, '127.0.0.1'))
    # Addrinfo#bind: port 0 takes a free one (Net::HTTP's local_port in upstream's tests)
    port = Addrinfo.tcp('127.0.0.1', 0).bind { |b| [b.local_address.ip_address, b.local_address.ip_port] }
    p port[0], port[1].between?(1, 65535)
    p Net::HTTP.start('127.0.0.1', PORTS['http'], local_host: '127.0.0.1', local_port: port[1]) { |h| h.get('/bound').body[/hello.*/] }`,
  'SSLSocket with a good and a bad certificate': `
    go = lambda do |host, &cfg|
      tcp = TCPSocket.new('127.0.0.1', PORTS['tls'])
      ctx = OpenSSL::SSL::SSLContext.new
      cfg&.call(ctx)
      ssl = OpenSSL::SSL::SSLSocket.new(tcp, ctx)
      ssl.sync_close = true
      ssl.hostname = host if host
      ssl.connect
      ssl.write "GET /tls HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n"
      r = [ssl.gets, ssl.read[/hello.*/], ssl.peer_cert.subject.to_s, ssl.io.equal?(tcp), ssl.post_connection_check('127.0.0.1')]
      ssl.close
      r << tcp.closed?
    rescue => e
      [e.class, e.message.sub(/:\\d+ state/, ':PORT state')]
    end
    p go.(nil)
    p go.(nil) { |c| c.verify_mode = OpenSSL::SSL::VERIFY_PEER }
    p go.('localhost') { |c| c.set_params(ca_file: CA) }
    p go.('other.test') { |c| c.set_params(ca_file: CA) }
    p go.('other.test') { |c| c.set_params(ca_file: CA, verify_hostname: false) }
    tcp = TCPSocket.new('127.0.0.1', PORTS['clientCert'])
    ssl = OpenSSL::SSL::SSLSocket.new(tcp)
    ssl.connect
    begin
      ssl.write "GET / HTTP/1.0\r\n\r\n"
      ssl.read
    rescue OpenSSL::SSL::SSLError => e
      p [e.class, e.message]
    end`,
  'Net::HTTP: a hostname mismatch on a name, a client certificate wanted': `
    begin
      Net::HTTP.start('localhost', PORTS['other'], use_ssl: true, ca_file: CA.sub('server.pem', 'other.pem')) { |h| h.get('/') }
    rescue OpenSSL::SSL::SSLError => e
      p [e.class, e.message.sub(/:\d+ state/, ':PORT state')]
    end
    begin
      Net::HTTP.start('127.0.0.1', PORTS['clientCert'], use_ssl: true, verify_mode: OpenSSL::SSL::VERIFY_NONE) { |h| h.get('/') }
    rescue OpenSSL::SSL::SSLError => e
      p [e.class, e.message]
    end`,
};

// TCPServer scenarios; LISTEN is a free port. The first is answered by a
// native client (a child process that connects once the port listens);
// the second has its client in the same Ruby: threads natively, fibers
// under NetHttpWasm::Scheduler in ruby.wasm (which has no threads).
const SERVER_SCENARIOS = {
  'a TCPServer in Ruby answering a client': `
    s = TCPServer.new('127.0.0.1', LISTEN)
    begin; TCPServer.new('127.0.0.1', LISTEN); rescue => e; p [e.class, e.message.sub(LISTEN.to_s, 'LISTEN')]; end
    begin; s.accept_nonblock; rescue IO::WaitReadable => e; p [e.class, e.message]; end
    p s.addr.map { |x| x == LISTEN ? :LISTEN : x }, s.local_address.ip_port == LISTEN, s.listen(5)
    p IO.select([s], nil, nil, 60).map(&:size)
    sleep 0.3 # (the client's bytes and its end come before the accept)
    a = s.accept
    p a.class, a.peeraddr[2], a.addr[1] == LISTEN
    p a.read
    a.write 'bye'
    a.close
    s.close
    p s.closed?
    begin; s.accept; rescue => e; p [e.class, e.message]; end`,
  'a TCPServer and its client in one Ruby': `
    run = defined?(NetHttpWasm::Scheduler) ? ->(&b) { NetHttpWasm::Scheduler.run { Fiber.schedule(&b) } } : ->(&b) { b.call }
    task = defined?(NetHttpWasm::Scheduler) ? ->(&b) { Fiber.schedule(&b) } : ->(&b) { Thread.new(&b) }
    out = {}
    run.call do
      server = TCPServer.new('127.0.0.1', 0)
      port = server.addr[1]
      t = task.call do
        a = server.accept
        out[:server_got] = a.gets
        a.write "echo: #{out[:server_got]}"
        a.close_write
        out[:server_rest] = a.read
        a.close
      end
      c = TCPSocket.new('127.0.0.1', port)
      c.puts 'hello'
      out[:client_got] = c.gets
      out[:select] = IO.select([c], nil, nil, 5)&.first&.size
      out[:client_eof] = c.read
      c.close
      t.join if t.respond_to?(:join)
      server.close
    end
    p out.sort`,
  'an SSLServer and its Net::HTTP client in one Ruby': `
    run = defined?(NetHttpWasm::Scheduler) ? ->(&b) { NetHttpWasm::Scheduler.run { Fiber.schedule(&b) } } : ->(&b) { b.call }
    task = defined?(NetHttpWasm::Scheduler) ? ->(&b) { Fiber.schedule(&b) } : ->(&b) { Thread.new(&b) }
    ctx = OpenSSL::SSL::SSLContext.new
    ctx.cert = OpenSSL::X509::Certificate.new(File.read(CA))
    ctx.key = OpenSSL::PKey.read(File.read(File.join(File.dirname(CA), 'server.key')))
    out = {}
    run.call do
      tcp = TCPServer.new('127.0.0.1', 0)
      server = OpenSSL::SSL::SSLServer.new(tcp, ctx)
      t = task.call do
        out[:served] = Array.new(4) do |i|
          sleep 0.3 if i == 3 # (the last client's hello has come before its accept)
          a = server.accept
          line = a.gets
          nil until a.gets == "\\r\\n"
          a.write "HTTP/1.1 200 OK\\r\\nContent-Length: #{line.bytesize}\\r\\nConnection: close\\r\\n\\r\\n#{line}"
          a.close
          [a.class.name, a.closed?]
        rescue => e
          [e.class.name, e.message[/\\ASSL_accept/]]
        end
      end
      h = Net::HTTP.new('localhost', tcp.addr[1]); h.use_ssl = true; h.ca_file = CA
      out[:got] = Array.new(2) { |i| h.start { [h.get("/n#{i}").body, h.instance_variable_get(:@socket).io.session_reused?] } }
      out[:refused] = begin
        Net::HTTP.start('localhost', tcp.addr[1], use_ssl: true) { }
      rescue => e
        [e.class.name, e.message[/certificate verify failed \\(.*?\\)/]]
      end
      early = Net::HTTP.new('localhost', tcp.addr[1]); early.use_ssl = true; early.ca_file = CA; early.open_timeout = 10
      out[:early] = early.get('/early').body
      t.join if t.respond_to?(:join)
      server.close
      out[:closed] = tcp.closed?
    end
    p out.sort`,
};

// A client of the first: connects (retrying for a minute: a VM may take
// a while to boot on a busy machine), sends, half-closes, reads the answer.
const CLIENT = `
require 'socket'
port = ARGV[0].to_i
c = nil
240.times { begin; c = TCPSocket.new('127.0.0.1', port); break; rescue SystemCallError; sleep 0.25; end }
c.write 'hi from client'
c.close_write
print c.read
`;

// Whether a server scenario listens on LISTEN for that client (the others
// have their clients in the same Ruby).
function hasClient(body) {
  return /\bLISTEN\b/.test(body);
}

function withClient(port) {
  const child = spawn('ruby', ['-e', CLIENT, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return { done: once(child, 'exit').then(() => out), child };
}

function freePort() {
  const r = spawnSync('ruby', ['-rsocket', '-e', 's = TCPServer.new("127.0.0.1", 0); print s.addr[1]; s.close'], { encoding: 'utf8' });
  return Number(r.stdout);
}

// The Ruby of a scenario, with its inputs.
function script(body, env) {
  return `require 'socket'\nrequire 'openssl'\nrequire 'json'\nrequire 'net/http'\n%i[PORTS FULL CA LISTEN].each { |c| Object.send(:remove_const, c) if Object.const_defined?(c) }\nPORTS = JSON.parse(${JSON.stringify(env.PORTS)})\nFULL = ${env.FULL}\nCA = ${JSON.stringify(env.CA)}\nLISTEN = ${env.LISTEN || 0}\n${body}\n`;
}

function native(code) {
  const r = spawnSync('ruby', ['-e', code], { encoding: 'utf8', timeout: 30000 });
  if (r.status !== 0) throw new Error(`native ruby failed: ${r.stderr}`);
  return r.stdout;
}

// native() of a code that spawnSync cannot run while its client waits on this event loop
function nativeAsync(code) {
  const child = spawn('ruby', ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`native ruby failed: ${err}`);
    return out;
  });
}

// What the VM prints running code ($stdout captured).
async function inVM(vm, blocking, code) {
  const wrapped = `require 'stringio'\n__out = StringIO.new\n$stdout = __out\nbegin\n${code}\nensure\n$stdout = STDOUT\nend\n__out.string`;
  return blocking ? vm.eval(wrapped).toString() : (await vm.evalAsync(wrapped)).toString();
}

describe('sockets in ruby.wasm, compared with native MRI', { skip, timeout: 600000 }, () => {
  let servers;
  let full;
  let certs;
  let env;
  const expected = {};
  const clientGot = {};

  before(async () => {
    certs = makeCerts();
    servers = spawn(process.execPath, ['--input-type=module', '-e', SERVERS], {
      env: { ...process.env, KEY: `${certs.dir}/server.key`, CERT: certs.certPath, OTHER_KEY: `${certs.dir}/other.key`, OTHER_CERT: certs.otherCertPath },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = await once(servers.stdout, 'data');
    const ports = JSON.parse(String(line));
    // a port nothing listens on: taken and let go
    const probe = spawnSync('ruby', ['-rsocket', '-e', 's = TCPServer.new("127.0.0.1", 0); print s.addr[1]; s.close'], { encoding: 'utf8' });
    ports.refused = Number(probe.stdout);
    full = spawn('ruby', ['-e', FULL], { stdio: ['pipe', 'pipe', 'inherit'] });
    const [fullPort] = await once(full.stdout, 'data');
    env = { PORTS: JSON.stringify(ports), FULL: Number(String(fullPort)), CA: certs.certPath };
    for (const [name, body] of Object.entries(SCENARIOS)) expected[name] = native(script(body, env));
    for (const [name, body] of Object.entries(SERVER_SCENARIOS)) {
      const listen = freePort();
      const client = hasClient(body) ? withClient(listen) : null;
      expected[name] = await nativeAsync(script(body, { ...env, LISTEN: listen }));
      if (client) clientGot[name] = await client.done;
    }
  });

  after(() => {
    servers?.kill();
    full?.stdin.end();
    full?.kill();
    certs?.cleanup();
  });

  test('native MRI gives the expected answers (the oracle is sane)', () => {
    assert.match(expected['the seed: TCPSocket.open, write, read, close'], /hello \/seed/);
    assert.match(expected['a refused connect'], /Errno::ECONNREFUSED/);
    assert.match(expected['names a socket call refuses: a NUL byte, a name with no address'], /^\[ArgumentError, "string contains null byte"\]\n(.*\n){9}(\[:resolve, "Name or service not known"\]\n){2}/);
    assert.match(expected['a connect that times out'], /Errno::ETIMEDOUT.*\n.*\ntrue\n$/);
    assert.match(expected['SSLSocket with a good and a bad certificate'], /certificate verify failed \(hostname mismatch\)/);
    assert.match(expected['a TCPServer in Ruby answering a client'], /"hi from client"/);
    assert.equal(clientGot['a TCPServer in Ruby answering a client'], 'bye');
    const ssl = expected['an SSLServer and its Net::HTTP client in one Ruby'];
    assert.ok(ssl.includes('[:got, [["GET /n0 HTTP/1.1\\r\\n", false], ["GET /n1 HTTP/1.1\\r\\n", true]]]'), ssl);
    assert.ok(ssl.includes('[:served, [["OpenSSL::SSL::SSLSocket", true], ["OpenSSL::SSL::SSLSocket", true], ["OpenSSL::SSL::SSLError", "SSL_accept"], ["OpenSSL::SSL::SSLSocket", true]]]'), ssl);
    assert.ok(ssl.includes('[:early, "GET /early HTTP/1.1\\r\\n"]'), ssl);
  });

  for (const version of VERSIONS) {
    for (const [transport, blocking] of TRANSPORTS) {
      describe(`ruby.wasm ${version}, ${transport} transport`, () => {
        let box;
        before(async () => {
          box = await createRubyVM({ ruby: version, blocking, mounts: { [certs.dir]: certs.dir } });
        });
        after(() => box && box.dispose());
        for (const name of Object.keys(SCENARIOS)) {
          // (these parse certificates in Ruby: peer_cert, post_connection_check, a client's)
          const skip = /certificate/.test(name) && fiberCertTrap(version, blocking);
          test(name, { skip }, async () => {
            const got = await inVM(box.vm, blocking, script(SCENARIOS[name], env));
            assert.equal(got, expected[name]);
          });
        }
        for (const name of Object.keys(SERVER_SCENARIOS)) {
          // (the SSLServer's certificate is parsed in Ruby; in fibers of the
          // scheduler, with either transport, where the scenario runs one)
          const code = SERVER_SCENARIOS[name];
          const skip = code.includes('X509::Certificate.new') && fiberCertTrap(version, blocking && !code.includes('Scheduler.run'));
          test(name, { skip }, async () => {
            const listen = freePort();
            const client = hasClient(SERVER_SCENARIOS[name]) ? withClient(listen) : null;
            try {
              const got = await inVM(box.vm, blocking, script(SERVER_SCENARIOS[name], { ...env, LISTEN: listen }));
              assert.equal(got, expected[name]);
              if (client) assert.equal(await client.done, clientGot[name]);
            } finally {
              client?.child.kill();
            }
          });
        }
      });
    }
  }
});

const GEMS = '/usr/share/rubygems-integration/all/gems';
const EXCON = `${GEMS}/excon-0.88.0`;
const HTTPCLIENT = `${GEMS}/httpclient-2.8.3`;
const skipGems = skip || (!existsSync(EXCON) || !existsSync(HTTPCLIENT) ? 'not installed: apt-get install ruby-excon ruby-httpclient' : false);

// Pure-Ruby clients that open their own sockets, unmodified (Debian's
// packages, mounted into the VM).
const CLIENTS = {
  'Excon: a GET, two on one connection, HTTPS': `
    require 'excon'
    r = Excon.get("http://127.0.0.1:#{PORTS['http']}/excon")
    p [r.status, r.body, r.headers['Content-Type']]
    c = Excon.new("http://127.0.0.1:#{PORTS['http']}", persistent: true)
    p 2.times.map { |i| c.get(path: "/p#{i}").body }
    c.reset
    s = Excon.get("https://127.0.0.1:#{PORTS['tls']}/secure", ssl_ca_file: CA)
    p [s.status, s.body]
    begin
      Excon.get("https://127.0.0.1:#{PORTS['tls']}/secure")
    rescue Excon::Error::Socket => e
      p e.class
    end
    begin
      Excon.get("http://127.0.0.1:#{PORTS['refused']}/")
    rescue Excon::Error::Socket => e
      p [e.class, e.message]
    end`,
  'Excon by name: Resolv asks the host (localhost, a name nobody resolves)': `
    require 'excon'
    p [Resolv.getaddress('localhost'), Resolv.getaddresses('127.0.0.1')]
    r = Excon.get("http://localhost:#{PORTS['http']}/byname")
    p [r.status, r.body, r.remote_ip]
    begin
      Resolv.getaddress('no-such-host.invalid')
    rescue Resolv::ResolvError => e
      p [e.class, e.message]
    end
    begin
      Excon.get("http://no-such-host.invalid:#{PORTS['http']}/")
    rescue Excon::Error::Socket => e
      p [e.class, e.message]
    end`,
  'httpclient: a GET, a POST, HTTPS': `
    require 'httpclient'
    # its timeouts are Timeout.timeout's: a Thread natively; in ruby.wasm,
    # which has no threads, NetHttpWasm::Scheduler's timers
    within = lambda do |&blk|
      next blk.call unless defined?(NetHttpWasm::Scheduler)
      NetHttpWasm::Scheduler.run { Fiber.schedule(&blk) }
    end
    within.call do
      c = HTTPClient.new
      r = c.get("http://127.0.0.1:#{PORTS['http']}/hc")
      p [r.status, r.body, r.content_type]
      p c.post("http://127.0.0.1:#{PORTS['http']}/post", body: 'a=1').body
      t = HTTPClient.new
      t.ssl_config.clear_cert_store
      t.ssl_config.add_trust_ca(CA)
      s = t.get("https://127.0.0.1:#{PORTS['tls']}/hcs")
      p [s.status, s.body]
    end`,
};

describe('pure-Ruby clients over TCPSocket in ruby.wasm, compared with native MRI', { skip: skipGems, timeout: 600000 }, () => {
  let servers;
  let certs;
  let env;
  const expected = {};
  before(async () => {
    certs = makeCerts();
    servers = spawn(process.execPath, ['--input-type=module', '-e', SERVERS], {
      env: { ...process.env, KEY: `${certs.dir}/server.key`, CERT: certs.certPath, OTHER_KEY: `${certs.dir}/other.key`, OTHER_CERT: certs.otherCertPath },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = await once(servers.stdout, 'data');
    const ports = JSON.parse(String(line));
    const probe = spawnSync('ruby', ['-rsocket', '-e', 's = TCPServer.new("127.0.0.1", 0); print s.addr[1]; s.close'], { encoding: 'utf8' });
    ports.refused = Number(probe.stdout);
    env = { PORTS: JSON.stringify(ports), FULL: 0, CA: certs.certPath };
    for (const [name, body] of Object.entries(CLIENTS)) expected[name] = native(script(body, env));
  });
  after(() => {
    servers?.kill();
    certs?.cleanup();
  });

  for (const version of VERSIONS) {
    for (const [transport, blocking] of TRANSPORTS) {
      describe(`ruby.wasm ${version}, ${transport} transport`, () => {
        let box;
        before(async () => {
          box = await createRubyVM({ ruby: version, blocking, gems: [EXCON, HTTPCLIENT], mounts: { [certs.dir]: certs.dir } });
        });
        after(() => box && box.dispose());
        for (const name of Object.keys(CLIENTS)) {
          // (HTTPS: post_connection_check parses the peer's certificate)
          const skip = /HTTPS/.test(name) && fiberCertTrap(version, blocking);
          test(name, { skip }, async () => {
            const got = await inVM(box.vm, blocking, script(CLIENTS[name], env));
            assert.equal(got, expected[name]);
          });
        }
      });
    }
  }
});

// In a browser (the fetch transport) there are no raw sockets: the error says so.
describe('sockets over the fetch transport', { timeout: 240000 }, () => {
  let box;
  before(async () => {
    box = await createRubyVM({ ruby: '4.0', transport: 'fetch' });
  });
  after(() => box && box.dispose());
  test('TCPSocket.new and TCPServer.new raise, naming the reason', async () => {
    const got = await inVM(box.vm, false, `
      require 'socket'
      [-> { TCPSocket.new('127.0.0.1', 80) }, -> { Socket.tcp('127.0.0.1', 80) }, -> { TCPServer.new('127.0.0.1', 0) }].each do |f|
        f.call
      rescue SystemCallError => e
        p [e.class, e.message]
      end`);
    assert.equal(got, [
      '[Errno::EHOSTUNREACH, "No route to host - connect(2) for \\"127.0.0.1\\" port 80 (net-http-wasm: a browser has no raw sockets; use Net::HTTP, which goes through fetch())"]',
      '[Errno::EHOSTUNREACH, "No route to host - connect(2) for \\"127.0.0.1\\" port 80 (net-http-wasm: a browser has no raw sockets; use Net::HTTP, which goes through fetch())"]',
      '[Errno::EACCES, "Permission denied - bind(2) for \\"127.0.0.1\\" port 0 (net-http-wasm: a browser cannot listen for connections)"]',
      '',
    ].join('\n'));
  });
});
