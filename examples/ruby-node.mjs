// Net::HTTP inside ruby.wasm, in Node: sockets from node:net, bytes by the codec.
//
//   node examples/ruby-node.mjs          # ruby.wasm 4.0
//   node examples/ruby-node.mjs 3.4      # ruby.wasm 3.4
//
// Starts a small HTTP server on 127.0.0.1 and talks to it from Ruby. It
// imports the packages by name, so it runs as it is in a project that did
//   npm install net-http-wasm @ruby/wasm-wasi @ruby/4.0-wasm-wasi
// (in this repository Node resolves net-http-wasm to the package itself).
import v8 from 'node:v8';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { WASI } from 'node:wasi';
import { RubyVM } from '@ruby/wasm-wasi';
import { installNetHttp } from 'net-http-wasm/ruby';

// Node 20 needs this before a ruby.wasm VM grows its memory (a V8 GC bug).
v8.setFlagsFromString('--no-incremental-marking');

const version = process.argv[2] || '4.0';
const require = createRequire(import.meta.url);

// a server to talk to
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(`${req.method} ${req.url} on connection ${req.socket.remotePort}${body ? ` with ${body}` : ''}\n`);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

// a ruby.wasm VM
const module = await WebAssembly.compile(readFileSync(require.resolve(`@ruby/${version}-wasm-wasi/dist/ruby+stdlib.wasm`)));
const wasip1 = new WASI({ version: 'preview1', returnOnExit: true });
const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
vm.eval('$stdout.sync = true');

installNetHttp(vm);

// Net::HTTP waits on JS promises: run it with evalAsync
await vm.evalAsync(`
  require 'net/http'

  res = Net::HTTP.get_response(URI('http://127.0.0.1:${port}/hello'))
  puts res.code, res['content-type'], res.body

  Net::HTTP.start('127.0.0.1', ${port}) do |http|        # one connection, kept alive
    3.times { |i| print http.get("/n#{i}").body }
    print http.request(Net::HTTP::Post.new('/f').tap { |r| r.set_form_data('a' => 'b c') }).body
  end

  begin
    Net::HTTP.get(URI('http://127.0.0.1:9/'))
  rescue => e
    puts "#{e.class}: #{e.message}"
  end
`);

server.close();
