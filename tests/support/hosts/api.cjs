// Run under each host by tests/hosts/runtimes.test.mjs: the JS API from CommonJS.
'use strict';
const { Request, URI, parseResponse } = require('net-http-wasm');

const req = new Request('POST', URI('http://example.com:8080/signup'), { 'X-Trace': 'abc' });
req.body = 'a=1';
const res = parseResponse(new TextEncoder().encode('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi'));
console.log(JSON.stringify({ request: new TextDecoder().decode(req.toBytes()), code: res.code, body: new TextDecoder().decode(res.body) }));
