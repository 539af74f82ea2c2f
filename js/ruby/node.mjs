// net-http-wasm/ruby in Node: Ruby's own Net::HTTP inside a ruby.wasm VM,
// over node:net / node:tls, with this package's codec doing the byte work.
//
//   import { installNetHttp } from 'net-http-wasm/ruby';
//   const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
//   installNetHttp(vm, { blocking: true });
//   vm.eval(`require 'net/http'; puts Net::HTTP.get(URI('http://127.0.0.1:8080/'))`);
import { install } from './install.mjs';
import { nodeAsyncTransport } from './node-async.mjs';
import { nodeBlockingTransport } from './node-blocking.mjs';

const host = {
  defaultTransport: 'node',
  node: (blocking) => (blocking ? nodeBlockingTransport() : nodeAsyncTransport()),
};

/**
 * Makes `require 'net/http'` work in a ruby.wasm VM and routes Net::HTTP
 * through host sockets, with this package's codec writing requests and
 * reading responses. Options:
 *   blocking   true: Net::HTTP blocks this thread while it waits, as it
 *              blocks a Ruby thread natively (sockets in an I/O thread):
 *              the fastest, and it works from vm.eval and inside any
 *              block; a server in this same thread cannot answer it.
 *              false (default): waits are promises, awaited by switching
 *              fibers inside vm.evalAsync; the event loop runs meanwhile.
 *   transport  'node' (default), 'fetch', or a function
 *              ({ host, port, tls, timeoutMs }) → Promise<stream>
 *   codec      true (default): the codec does the byte work; false: net/http's
 *              own Ruby code does, over the same sockets
 *   profile    '4.0' or '3.4' (default: from the VM's RUBY_VERSION)
 *   tls        { ca: string | string[], rejectUnauthorized: boolean }: extra
 *              trusted certificates (PEM) / verification off, for every HTTPS
 *              connection (Net::HTTP's ca_file, cert_store, verify_mode and
 *              verify_hostname are honoured too)
 *   strictResponses  true: read responses in the codec's strict mode
 *              (RFC 9112 rejections raise Net::HTTPBadResponse; not MRI);
 *              also settable later as handle.bridge.strictResponses
 *   fetch      the fetch function to use (transport 'fetch')
 * Returns a handle: { bridge, uninstall() } (uninstall closes open sockets
 * and stops the I/O thread).
 */
export function installNetHttp(vm, options = {}) {
  return install(vm, options, host);
}
