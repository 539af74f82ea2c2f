// The JS API's contract: argument types, Ruby-like conveniences, lazy state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from '../support/builds.mjs';

const text = (b) => Buffer.from(b).toString('latin1');

for (const { name, api } of builds) {
  const { Request, URI, NetHttpError } = api;

  test(`${name}: wrong JS types get a TypeError naming the argument`, () => {
    assert.throws(() => new Request(1, '/'), { name: 'TypeError', message: /method/ });
    assert.throws(() => new Request('GET', 5), { name: 'TypeError', message: /uriOrPath/ });
    assert.throws(() => new Request('GET', '/').set(1, 'x'), { name: 'TypeError', message: /header name/ });
    assert.throws(() => new Request('GET', '/').set('a', {}), { name: 'TypeError', message: /header value/ });
    assert.throws(() => { new Request('GET', '/').body = 5; }, { name: 'TypeError', message: /body/ });
    assert.throws(() => new Request('GET', '/').toBytes(1.1), { name: 'TypeError', message: /httpVersion/ });
    assert.throws(() => api.decodeWwwForm(5), { name: 'TypeError', message: /str/ });
    assert.throws(() => api.encodeWwwForm(null), { name: 'TypeError', message: /params/ });
    assert.throws(() => new Request('GET', '/', null, { profile: '2.7' }), { name: 'TypeError', message: /profile/ });
  });

  test(`${name}: errors carry MRI's class and message and are raised where Ruby raises them`, () => {
    const r = new Request('GET', '/');
    assert.throws(() => r.set('X', 'a\nb'), (e) => e instanceof NetHttpError && e.rubyClass === 'ArgumentError' &&
      e.message === 'header field value cannot include CR/LF');
    assert.throws(() => new Request('GET', ''), { rubyClass: 'ArgumentError', message: 'HTTP request path is empty' });
    assert.throws(() => new Request('GET', URI('ftp://h/')), { rubyClass: 'ArgumentError', message: 'not an HTTP URI' });
    assert.throws(() => r.setFormData({ a: 1, b: 2 }, '\\k<x>'), { rubyClass: 'IndexError', message: 'undefined group name reference: x' });
    assert.equal(text(r.toBytes()).split('\r\n')[0], 'GET / HTTP/1.1', 'a rejected call leaves the request as it was');
    assert.throws(() => new Request('GET', '/a\r\nb').toBytes(), { rubyClass: 'ArgumentError', message: 'A Request-Line must not contain CR or LF' });
  });

  test(`${name}: a string target is a path unless it is an http(s) URL`, () => {
    assert.match(text(new Request('GET', 'http://h:81/x').toBytes()), /^GET \/x HTTP\/1.1\r\n[^]*Host: h:81\r\n/);
    assert.match(text(new Request('GET', { path: 'http://h/x' }).toBytes()), /^GET http:\/\/h\/x HTTP\/1.1\r\n/);
    assert.match(text(new Request('GET', new URL('http://h/y?z')).toBytes()), /^GET \/y\?z HTTP\/1.1\r\n/);
    assert.equal(new Request('get', URI('http://h')).path, '/');
    assert.equal(new Request('get', URI('http://h')).method, 'GET');
    assert.equal(new Request('purge', '/').method, 'purge');
  });

  test(`${name}: get, toHash and decodeContent follow the header store`, () => {
    const r = new Request('GET', URI('http://h/'), { 'X-One': '1' });
    assert.equal(r.decodeContent, true);
    r.addField('x-one', 2);
    assert.equal(r.get('X-ONE'), '1, 2');
    assert.equal(r.get('missing'), null);
    r.set('Accept-Encoding', 'br');
    assert.equal(r.decodeContent, false);
    r.delete('user-agent');
    assert.deepEqual(Object.keys(r.toHash()), ['x-one', 'accept-encoding', 'accept', 'host']);
    assert.deepEqual(r.toHash()['x-one'], ['1', '2']);
    assert.equal(new Request('HEAD', '/').decodeContent, false);
    assert.equal(new Request('GET', '/', { Range: 'bytes=0-1' }).decodeContent, false);
  });

  test(`${name}: numbers are written as Ruby's to_s writes them`, () => {
    assert.equal(api.encodeWwwForm([['a', 1.5], ['b', 1e20], ['c', 1e-5], ['d', 10n], ['e', 0.1], ['f', true]]),
      'a=1.5&b=100000000000000000000&c=1.0e-05&d=10&e=0.1&f=true');
    assert.equal(api.rubyNumberToString(1234567890123456.5), '1234567890123456.5');
    assert.equal(api.rubyNumberToString(-0.5), '-0.5');
    assert.equal(api.rubyNumberToString(NaN), 'NaN');
  });

  test(`${name}: binary bodies are written byte for byte`, () => {
    const r = new Request('POST', '/b');
    r.body = new Uint8Array([0, 255, 13, 10, 128]);
    const out = r.toBytes();
    assert.deepEqual([...out.subarray(out.length - 5)], [0, 255, 13, 10, 128]);
    assert.match(text(out), /Content-Length: 5\r\n/);
  });

  test(`${name}: decodeWwwFormComponent returns text or, on request, bytes`, () => {
    assert.equal(api.decodeWwwFormComponent('a+%E2%9C%93'), 'a ✓');
    assert.deepEqual([...api.decodeWwwFormComponent('%ff', { encoding: 'binary' })], [255]);
  });

  test(`${name}: encodeWwwForm with a separator joins as set_form_data does`, () => {
    assert.equal(api.encodeWwwForm({ a: 1, b: 2 }, ';'), 'a=1;b=2');
    assert.equal(api.encodeWwwForm({ a: 1, b: 2 }, '[\\0]'), 'a=1[&]b=2');
  });
}
