// The benchmark's inputs: identical for every runtime (Ruby reads them as JSON).
const json = JSON.stringify({
  items: Array.from({ length: 12 }, (_, i) => ({ id: i + 1, name: `item-${i + 1}`, price: 9.99 + i, tags: ['alpha', 'beta', 'gamma'], active: i % 2 === 0 })),
});

function chunked(body, size) {
  let out = '';
  for (let i = 0; i < body.length; i += size) {
    const part = body.slice(i, i + size);
    out += `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`;
  }
  return `${out}0\r\n\r\n`;
}

// ~1 KiB JSON body, chunked, 8 header lines including two Set-Cookie.
const body1k = json.slice(0, 1024).padEnd(1024, ' ');
const response =
  'HTTP/1.1 200 OK\r\n' +
  'Date: Mon, 30 Nov 2026 09:00:00 GMT\r\n' +
  'Content-Type: application/json; charset=utf-8\r\n' +
  'Transfer-Encoding: chunked\r\n' +
  'Connection: keep-alive\r\n' +
  'Set-Cookie: session=8f2a9c41; Path=/; HttpOnly\r\n' +
  'Set-Cookie: theme=dark; Path=/; Max-Age=31536000\r\n' +
  'Cache-Control: no-cache, no-store\r\n' +
  'X-Request-Id: 7f3c2a1e-5b4d-4e6f-8a9b-0c1d2e3f4a5b\r\n' +
  '\r\n' +
  chunked(body1k, 400);

// 1 MiB body in 16 KiB chunks, fed to the incremental parser in 16 KiB pieces.
const bigBody = 'x'.repeat(1 << 20);
const bigResponse = `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(bigBody, 16384)}`;

export const inputs = {
  request: {
    uri: 'http://api.example.com/v1/submit',
    header: ['X-Request-Id', '7f3c2a1e-5b4d-4e6f-8a9b-0c1d2e3f4a5b'],
    form: [['name', 'Jane Doe'], ['email', 'jane@example.com'], ['comment', 'Hello, world & more']],
  },
  response,
  bigResponse,
  feedSize: 16384,
  formPairs: [
    ['q', 'ruby net/http'],
    ['reserved', '!*\'();:@&=+$,/?#[]'],
    ['percent', '100% sure'],
    ['unicode', 'Zoë – 日本語 😀'],
    ['flag', null],
    ['tags', ['a b', 'c&d', 'e=f']],
    ['empty', ''],
  ],
  formString: 'q=ruby+net%2Fhttp&reserved=%21*%27%28%29%3B%3A%40%26%3D%2B%24%2C%2F%3F%23%5B%5D&percent=100%25+sure&unicode=Zo%C3%AB+%E2%80%93+%E6%97%A5%E6%9C%AC%E8%AA%9E+%F0%9F%98%80&flag&tags=a+b&tags=c%26d&tags=e%3Df&empty=',
  fields: [
    ['host', 'api.example.com'], ['user-agent', 'Mozilla/5.0 (X11; Linux x86_64)'], ['accept', 'text/html,application/xhtml+xml'],
    ['accept-language', 'en-US,en;q=0.9'], ['accept-encoding', 'gzip, deflate, br'], ['connection', 'keep-alive'],
    ['cache-control', 'max-age=0'], ['upgrade-insecure-requests', '1'], ['sec-fetch-dest', 'document'],
    ['sec-fetch-mode', 'navigate'], ['sec-fetch-site', 'none'], ['x-forwarded-for', '203.0.113.7'],
    ['x-forwarded-proto', 'https'], ['x-request-id', 'a1b2c3'], ['cookie', 'a=1; b=2'], ['content-type', 'text/plain'],
  ],
};

// Canonical text of each operation's output, hashed by every runtime's driver.
export const canonical = {
  request: (bytes) => bytes,
  formEncode: (s) => s,
  formDecode: (pairs) => pairs.map(([k, v]) => `${k}\u0000${v}\n`).join(''),
  canonicalize: (pairs) => pairs.map(([k, v]) => `${k}: ${v}\r\n`).join(''),
};
