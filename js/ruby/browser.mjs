// net-http-wasm/ruby in browsers: Ruby's own Net::HTTP inside a ruby.wasm VM,
// each request sent with fetch() (see fetch.mjs). Call `await init()` from
// net-http-wasm first where the page may not compile the codec synchronously.
import { install } from './install.mjs';

const host = { defaultTransport: 'fetch' };

/**
 * Makes `require 'net/http'` work in a ruby.wasm VM, over fetch(). Options:
 * transport ('fetch', or a function ({ host, port, tls, timeoutMs }) →
 * Promise<stream>), codec, profile, strictResponses, fetch (the function to
 * use): as in Node (js/ruby/node.mjs). Returns { bridge, uninstall() }.
 */
export function installNetHttp(vm, options = {}) {
  return install(vm, options, host);
}
