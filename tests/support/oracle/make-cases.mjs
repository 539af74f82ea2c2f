#!/usr/bin/env node
// Writes the hand-designed differential cases to tests/fixtures/cases/<name>.json.
//
//   node tests/support/oracle/make-cases.mjs
//
// The JSON files are the test data (they are what the tests read); this
// script is only how they are written, so that a case is one short line here.
// Each case is emitted once per profile unless it says otherwise; ids are
// "<file>-<nnn>@<profile>".  After changing cases, run
// `node tests/support/oracle/record.mjs` to refresh the recorded MRI results.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const casesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'cases');
const PROFILES = ['4.0', '3.4'];
const files = {};

function add(file, c, profiles = PROFILES) {
  const list = (files[file] ||= { n: 0, cases: [] });
  const num = String(list.n++).padStart(3, '0');
  for (const profile of profiles) list.cases.push({ id: `${file}-${num}@${profile}`, profile, ...c });
}

const U = (uri) => ({ uri });
const P = (path) => ({ path });
const req = (method, target, init = null, ops = [], version = '1.1') =>
  ({ op: 'request', method, target, init, ops, version });
const R = (file, ...a) => add(file, req(...a));
const B64 = (bytes) => ({ base64: Buffer.from(bytes).toString('base64') });

// ---------------------------------------------------------------- methods
{
  const F = 'methods';
  const classes = ['Get', 'Head', 'Post', 'Put', 'Delete', 'Options', 'Trace', 'Patch', 'Propfind',
    'Proppatch', 'Mkcol', 'Copy', 'Move', 'Lock', 'Unlock'];
  for (const k of classes) {
    const m = k.toUpperCase();
    R(F, m, U('http://example.com/x'));
    R(F, m, P('/x'), null, [['body', 'abc']]);
  }
  R(F, 'get', U('http://example.com/'));
  R(F, 'post', P('/'), null, [['body', 'a=1']]);
  R(F, 'pAtCh', P('/'));
  R(F, 'propFind', P('/dav'));
  R(F, 'BREW', U('http://example.com/pot'));
  R(F, 'brew', P('/pot'), null, [['body', 'coffee']]);
  R(F, 'M-SEARCH', P('*'));
  R(F, 'PURGE', P('/cache'));
  R(F, 'GET ', P('/')); // not a known method: generic request, trailing space kept
  R(F, ' GET', P('/'));
  R(F, '', P('/'));
  R(F, 'GE\rT', P('/'));
  R(F, 'GET\n', P('/'));
  R(F, 'G\r\nET', U('http://example.com/'));
  R(F, 'ПОСТ', P('/'));
  R(F, 'ınfo', P('/')); // dotless i: upcase gives "INFO", still unknown
  R(F, 'poſt', P('/')); // long s: upcase gives "POST" → Net::HTTP::Post
  R(F, 'dELETE', U('http://example.com/a'), null, [['body', '']]);
  R(F, 'HEAD', U('http://example.com/'), null, [['body', 'x']]);
  R(F, 'GET', U('http://example.com/'), null, [['body', 'q=1']]);
  R(F, 'OPTIONS', P('*'));
  R(F, 'CONNECT', P('example.com:443'));
  R(F, 'TRACE', P('/'), [['Max-Forwards', '0']]);
  R(F, 'LINK', P('/'), null, [['body', null]]);
}

// ---------------------------------------------------------------- URIs
{
  const F = 'uris';
  const uris = [
    'http://example.com', 'http://example.com/', 'http://example.com:80/', 'http://example.com:8080/p',
    'https://example.com/', 'https://example.com:443/', 'https://example.com:80/', 'http://example.com:443/',
    'http://example.com:0080/', 'http://example.com:00/', 'http://example.com:0/', 'http://example.com:/',
    'https://example.com:/x', 'http://example.com:65535/', 'http://example.com:65536/',
    'http://example.com:99999999999999999999/', 'http://example.com:-1/', 'http://example.com:8a/',
    'http://example.com:+80/', 'http://example.com:8080:9090/', 'http://example.com: 80/',
    'http://[::1]/', 'http://[::1]:8080/p', 'https://[2001:db8::1]:443/', 'https://[2001:db8::1]:8443/',
    'http://[::ffff:1.2.3.4]/', 'http://[fe80::1%25eth0]/', 'http://[::1/', 'http://::1/', 'http://[v1.x]/',
    'http://[V7.abc:def]:81/',
    'http://user:pass@example.com/p', 'http://user@example.com:81/', 'http://@example.com/', 'http://u%40x:p@h/',
    'http://example.com/p?q=1&r=2', 'http://example.com/p?', 'http://example.com/?', 'http://example.com?x=1',
    'http://example.com?', 'http://example.com/p#frag', 'http://example.com/p?q#f', 'http://example.com#f',
    'http://example.com/p?a=1#', 'http://example.com/#', 'HTTP://EXAMPLE.COM/P', 'Http://Example.Com:8080/A',
    'hTTps://h:443/', 'HTTPS://H:444/', 'ftp://example.com/', 'mailto:x@example.com', 'file:///etc/passwd',
    'ws://example.com/', 'wss://example.com/', 'ldap://example.com/', 'foo://example.com/', 'http:/p', 'http:///p',
    'http://:80/', 'http:', 'http://', 'https://', 'http:p', '//example.com/p', '/just/a/path', '', 'example.com',
    'http://example.com/é', 'http://é.example/', 'http://example.com/?q=é', 'http://example.com/#é',
    'http://example.com/😀', 'http://example.com/\u0000', 'http://example.com/\u007f', 'http://example.com/a b',
    'http://example.com/a%20b', 'http://example.com/a\tb', 'http://example.com/p\r\n', 'http://exa mple.com/',
    ' http://example.com/', 'http://example.com/ ', 'http://example.com/p?q=a b', 'http://example.com/%zz',
    'http://example.com/%', 'http://example.com/?a=%', 'http://example.com/p;params', 'http://example.com/~user',
    'http://example.com/a/../b', 'http://example.com/./a', 'http://example.com//double', 'http://ex_ample.com/',
    'http://example.com./', 'http://1.2.3.4:8080/', 'http://999.999.999.999/', 'http://example.com/p{q}',
    'http://example.com/p|q', 'http://example.com/p\\q', 'http://example.com/"q"', 'http://example.com/<q>',
    'http://example.com/p?q=[1]', 'http://example.com/p[1]', 'http://exam%41ple.com/', 'http://EXAMPLE.com:080/',
    'http://example.com:8080?q', 'http://a:b:c@example.com/', 'http://example.com/\u00a0',
    'http://example.com/\u{10FFFF}', 'http://example.com/\u2028', 'http://example.com/\ud7ff\ue000',
    'http://xn--bcher-kva.example/', 'http://example.com/' + 'a'.repeat(3000),
    'ftp:x', 'ftp:example.com./dO=B', 'foo:bar', 'ws:x', 'https:x', 'mailto:', 'urn:isbn:0451450523',
    'HTTP:x', 'file:x', 'ldap:x', 'http:?q', 'http:#f', 'http:/', 'http:///', 'http://[::1]:/',
  ];
  for (const u of uris) R(F, 'GET', U(u));
  R(F, 'POST', U('http://example.com:8080/form?x=1'), null, [['body', 'a=b']]);
  R(F, 'POST', U('http://[::1]:8080/'), [['Host', 'override:1']]);
  R(F, 'GET', U('https://user:pw@[::1]/p?q#f'));
  R(F, 'GET', U('http://example.com/p'), [['host', '']]);
  R(F, 'GET', U('http://example.com:81/p'), [['HOST', 'a.example']]);
  R(F, 'GET', U('http://example.com/'), null, [['delete', 'Host']]);
  R(F, 'GET', U('http://example.com/'), null, [['set', 'host', null]]);
  R(F, 'GET', U('http://example.com/'), null, [['set', 'HOST', 'x.example:99']]);
  R(F, 'GET', U('http://example.com/'), null, [['add', 'Host', 'second']]);
  R(F, 'GET', U('http://example.com/'), [['Host', null]]);
}

// ---------------------------------------------------------------- paths
{
  const F = 'paths';
  const paths = ['/', '/p', 'p', '*', 'http://h/p', 'HTTPS://h/p', 'example.com:443', '', ' ', '/a b', '/a\r\nb',
    '/a\nb', '/a\rb', '/é', '/😀', '/p?q#f', '//', '?q', '#f', '/\u0000', '/\t', '/%zz', '/' + 'x'.repeat(5000),
    '/\u0085', '/\u2028'];
  for (const p of paths) R(F, 'GET', P(p));
  R(F, 'POST', P(''), null, [['body', 'x']]);
  R(F, 'POST', P('/a\nb'), null, [['body', 'x']]);
  R(F, 'POST', P('relative/path'), [['Host', 'example.com']], [['body', 'x']]);
}

// ---------------------------------------------------------------- initheader
{
  const F = 'initheader';
  const G = (init, ops = []) => R(F, 'GET', U('http://example.com/'), init, ops);
  G([['Content-Type', 'text/plain']]);
  G([['X-Foo', 'a'], ['x-foo', 'b']]);
  G([['X-Foo', 'a'], ['X-Bar', 'b'], ['x-FOO', 'c']]);
  G([['A', '1'], ['A', '2']]);
  G([['A', '1'], ['B', '2'], ['A', '3']]);
  G([['X', '1'], ['Y', null]]);
  G([['X', '1'], ['x', null]]);
  G([['Accept', null]]);
  G([['Accept-Encoding', null]]);
  G([['Range', null]]);
  G([['RANGE', 'bytes=0-1']]);
  G([['aCCEPT-eNCODING', 'br']]);
  G([['accept-encoding', '']]);
  G([['X-Range', 'x'], ['Accept-Encodings', 'y']]);
  G([['Accept', 'text/html'], ['User-Agent', 'X/1'], ['Host', 'other:1']]);
  G([['host', '']]);
  G([['user-agent', '  ']]);
  G([['X', '  v  ']]);
  G([['X', '\t v \t']]);
  G([['X', '\r\nv\r\n']]);
  G([['X', '\r\n\r\n']]);
  G([['X', '\nv']]);
  G([['X', 'v\r']]);
  G([['X', 'a\r\nb']]);
  G([['X', 'a\nb']]);
  G([['X', 'a\rb']]);
  G([['X', ' a\r\nb ']]);
  G([['X-Ünï', 'é\r\n\u0007x']]);
  G([['X', 'a\n\u0000\u001b\u007f\u0085\u00a0\u200b\u{1F600}\u2028#{x}#$y"\\']]);
  G([['X', '\r\u{10FFFF}\u{E0001}\u{FFFF}\u{1F3FB}\u0300']]);
  G([['X', '\u0000v\u0000']]);
  G([['X', '\u000b\fv\u000b\f']]);
  G([['X', '\u00a0v\u00a0']]);
  G([['X', '\u3000v\u2003']]);
  G([['X', '']]);
  G([['X', '   ']]);
  G([['', 'empty-name']]);
  G([['a'.repeat(1024), 'ok']]);
  G([['a'.repeat(1025), 'too long']]);
  G([['é'.repeat(600), 'v']]);
  G([['x'.repeat(20) + 'é'.repeat(600), 'v']]);
  G([['😀'.repeat(300), 'v']]);
  G([['a'.repeat(1025), null]]);
  G([['a'.repeat(1025), 'a\r\nb']]);
  G([['K', 'v'.repeat(65536)]]);
  G([['K', 'v'.repeat(65537)]]);
  G([['K-é', 'é'.repeat(32769)]]);
  G([['K', ' ' + 'v'.repeat(65536) + ' ']]);
  G([['a'.repeat(1025), 'v'.repeat(65537)]]);
  G([['K', 'v'.repeat(65537) + '\r\n']]);
  G([['K', 'v'.repeat(65537) + '\r\nx']]);
  G([['ß', '1'], ['SS', '2'], ['ss', '3']]);
  G([['\u212a', '1'], ['k', '2']]); // Kelvin sign downcases to "k"
  G([['İ', '1']]);
  G([['ΑΣ', '1'], ['ας', '2']]);
  G([['X-\u{1F600}', 'v']]);
  G([['Content-Length', '5']]);
  G([['Transfer-Encoding', 'chunked']]);
  G([['Cookie', 'a=1; b=2'], ['Cookie2', 'x']]);
  G([['x-', 'a'], ['-x', 'b'], ['--', 'c']]);
  G([], []);
  G(null, [['set', 'Accept-Encoding', 'identity']]);
  G([['accept-encoding', 'gzip']], [['delete', 'Accept-Encoding']]);
  R(F, 'POST', P('/'), [['Content-Type', 'application/json']], [['body', '{}']]);
  R(F, 'POST', P('/'), [['content-type', null]], [['body', '{}']]);
  R(F, 'HEAD', P('/'), [['Range', 'bytes=0-']]);
}

// ---------------------------------------------------------------- header ops
{
  const F = 'headers';
  const G = (ops, init = null) => R(F, 'GET', U('http://example.com/'), init, ops);
  G([['set', 'X-A', 'b']]);
  G([['set', 'X-A', ['a', 'b']]]);
  G([['set', 'X-A', []]]);
  G([['set', 'X-A', [['a', ['b']], 'c']]]);
  G([['set', 'X-A', [[]]]]);
  G([['set', 'X-A', ['a', null]]]);
  G([['set', 'X-A', [null]]]);
  for (const n of [0, 1, -1, 42, 1.5, -0.5, 0.1, 1e20, 1e-5, 0.30000000000000004, 123456789.123, 1e15, 1e16,
    9007199254740991, 9007199254740992, 1e21, 1e22, 1.7976931348623157e308, 5e-324, 2.5e-7, 0.0001, 1 / 3,
    -1e100, 100.5, 12345678901234567890, 2818667963147163.5, -3576514169108122.5, 1000000000000000.5,
    999999999999999.9, 4503599627370495.5, 123456789012345.67, 0.001, 1e-3 + 1e-18, 9.999999999999999e-5]) {
    G([['set', 'X-N', n]]);
  }
  G([['set', 'X-N', [1, 2.5, 'x', 1e30]]]);
  G([['add', 'X-N', 7], ['add', 'X-N', 0.25]]);
  G([['set', 'X-A', null]]);
  G([['set', 'Accept', null]]);
  G([['set', 'X-A', 'a\rb']]);
  G([['set', 'X-A', 'a\nb']]);
  G([['set', 'X-A', 'ab\r\n']]);
  G([['set', 'X-A', '\r\nab']]);
  G([['set', 'X-A', ['ok', 'a\nb']]]);
  G([['set', 'X-A', ['ok', ['deep\r']]]]);
  G([['add', 'X-A', 'a\r\nb']]);
  G([['add', 'Accept', 'a\rb']]);
  G([['add', 'Accept', ['x', 'a\nb']]]);
  G([['set', 'X-A', '\u0000\u0001\u007f\u0085\u2028é😀']]);
  G([['set', 'X-A', ' padded ']]);
  G([['set', 'X-A', 'v'.repeat(70000)]]);
  G([['set', 'k'.repeat(2000), 'v']]);
  G([['add', 'X-A', 'a']]);
  G([['add', 'X-A', 'a'], ['add', 'x-a', 'b'], ['add', 'X-A', ['c', 'd']]]);
  G([['add', 'X-A', []]]);
  G([['add', 'X-A', 'a'], ['add', 'X-A', []]]);
  G([['add', 'X-A', null]]);
  G([['add', 'X-A', 'a'], ['add', 'X-A', null]]);
  G([['add', 'Accept', 'text/html']]);
  G([['add', 'Accept', ['a', null, 'b']]]);
  G([['add', 'X-A', [['a'], [['b']]]]]);
  G([['delete', 'X-Nope']]);
  G([['delete', 'ACCEPT']]);
  G([['delete', 'accept'], ['set', 'Accept', 'x']]);
  G([['delete', 'user-agent']]);
  G([['delete', 'Accept-Encoding'], ['delete', 'Accept'], ['delete', 'User-Agent'], ['delete', 'Host']]);
  G([['set', 'user-agent', 'Mozilla/5.0']]);
  G([['set', 'USER-AGENT', ['a', 'b']]]);
  G([['set', 'X-A', '1'], ['set', 'X-B', '2'], ['set', 'x-a', '3']]);
  G([['set', 'X-A', '1'], ['set', 'X-B', '2'], ['delete', 'x-a'], ['set', 'X-A', '3']]);
  G([['set', 'X-A', '1'], ['set', 'X-A', null], ['add', 'X-A', '2']]);
  G([['set', 'x-FOO', 'v']]);
  G([['set', 'content-md5', 'v'], ['set', 'WWW-AUTHENTICATE', 'v'], ['set', 'x-xss-protection', '1']]);
  G([['set', 'X-', 'v']]);
  G([['set', '-X', 'v']]);
  G([['set', 'a--b', 'v']]);
  G([['set', '', 'v']]);
  G([['set', '-', 'v']]);
  G([['set', 'a b', 'v']]);
  G([['set', 'ß', 'v']]);
  G([['set', 'x_y', 'v']]);
  G([['set', 'Ünï-ÇØDÉ', 'v']]);
  G([['set', 'ǆ-ǳ', 'v']]);
  G([['set', 'X\r\nInjected', 'v']]); // keys are not checked by []=
  G([['set', 'X:Y', 'v']]);
  G([['add', 'X\nY', 'v']]);
  G([['set', 'Accept-Encoding', 'identity']]);
  G([['set', 'X-A', 'a'], ['add', 'x-a', 'b'], ['set', 'X-A', 'c']]);
  G([['set', 'X-A', ['a']], ['add', 'X-A', ['b', ['c', ['d']]]]]);
  G([['set', 'Connection', 'close'], ['set', 'Keep-Alive', '300']]);
  G([['set', 'Expect', '100-continue']]);
  G([['set', 'Expect', '100-continue'], ['body', 'x']]);
  R(F, 'POST', P('/'), null, [['set', 'X-A', 'a\r\nb'], ['set', 'X-B', 'never']]);
  R(F, 'POST', P('/'), null, [['set', 'X-B', 'x'], ['add', 'X-B', 'y\n']]);
  R(F, 'GET', P('/'), [['X-A', '1']], [['set', 'x-a', null], ['set', 'X-A', '2']]);
}

// ---------------------------------------------------------------- bodies
{
  const F = 'bodies';
  const all = [];
  for (let i = 0; i < 256; i++) all.push(i);
  R(F, 'POST', U('http://example.com/'), null, [['body', 'abc']]);
  R(F, 'POST', U('http://example.com/'), [['Content-Type', 'text/plain']], [['body', 'abc']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'content-type', 'application/json'], ['body', '{}']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'content-type', []], ['body', 'x']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'content-type', ''], ['body', 'x']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'content-type', ';charset=utf-8'], ['body', 'x']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'content-type', 'text'], ['body', 'x']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'content-type', ' / '], ['body', 'x']]);
  R(F, 'POST', U('http://example.com/'), null, [['set', 'Content-Type', 'x'], ['delete', 'CONTENT-TYPE'], ['body', 'x']]);
  R(F, 'GET', U('http://example.com/'), null, [['body', 'abc']]);
  R(F, 'PUT', P('/'), null, [['body', '']]);
  R(F, 'PUT', P('/'), null, [['body', null]]);
  R(F, 'PUT', P('/'), null, [['body', 'x'], ['body', null]]);
  R(F, 'PUT', P('/'), null, [['body', null], ['body', 'y']]);
  R(F, 'PUT', P('/'), null, [['body', B64(all)]]);
  R(F, 'PUT', P('/'), null, [['body', B64([0xff, 0xfe, 0xc3, 0x28, 0x00])]]);
  R(F, 'PUT', P('/'), null, [['body', B64([])]]);
  R(F, 'PUT', P('/'), null, [['body', 'é😀\u0000\r\n']]);
  R(F, 'PUT', P('/'), null, [['body', 'x'.repeat(100000)]]);
  R(F, 'PUT', P('/'), null, [['set', 'Content-Length', '999'], ['body', 'abc']]);
  R(F, 'PUT', P('/'), null, [['set', 'content-length', 'abc']]);
  R(F, 'PUT', P('/'), null, [['set', 'Content-Length', ['1', '2']], ['body', 'abcd']]);
  R(F, 'PUT', P('/'), [['Content-Length', '7']], [['body', '']]);
  R(F, 'POST', P('/'), null, [['set', 'Transfer-Encoding', 'chunked'], ['body', 'abc']]);
  R(F, 'POST', P('/'), null, [['set', 'Transfer-Encoding', 'chunked']]);
  R(F, 'POST', P('/'), [['transfer-encoding', 'gzip, chunked']], [['body', 'abc']]);
  R(F, 'POST', P('/'), null, [['set', 'X-Before', '1'], ['body', 'abc'], ['set', 'X-After', '2']]);
  R(F, 'HEAD', P('/'), null, [['body', 'x']]);
  R(F, 'OPTIONS', P('*'), null, [['body', '']]);
  R(F, 'DELETE', U('http://example.com/r'), null, [['body', '{"id":1}']]);
  R(F, 'POST', P('/'), null, [['form', [['a', '1']], null], ['body', 'override']]);
  R(F, 'POST', P('/'), null, [['body', 'first'], ['form', [['a', '1']], null]]);
  R(F, 'POST', P('/'), null, [['body', 'x'], ['set', 'Content-Type', null]]);
  R(F, 'POST', P('/'), null, [['set', 'content-type', 'Multipart/Form-Data'], ['body', 'x']]);
  R(F, 'POST', P('/'), null, [['add', 'Content-Type', 'a'], ['add', 'Content-Type', 'b'], ['body', 'x']]);
}

// ---------------------------------------------------------------- set_form_data
{
  const F = 'form_data';
  const base = [['a', '1'], ['b', ['2', '3']], ['c', null], ['d e', 'f&g']];
  const seps = [null, '&', ';', '&amp;', '', '&&', 'é', '\r\n', '\\0', '\\&', '\\\\', '\\`', "\\'", '\\1', '\\9',
    '\\k<x>', '\\k<', '\\', 'a\\', '\\\\0', '\\n', '\\0\\0', '[\\0]', '\\\\\\0', '\\+', '\\~', '%', '😀'];
  for (const s of seps) R(F, 'POST', P('/'), null, [['form', base, s]]);
  R(F, 'POST', P('/'), null, [['form', [], null]]);
  R(F, 'POST', P('/'), null, [['form', [], ';']]);
  R(F, 'POST', P('/'), null, [['form', [['a', []]], null]]);
  R(F, 'POST', P('/'), null, [['form', [['a', [null, 'x']], ['b', [null]]], ';']]);
  R(F, 'POST', P('/'), null, [['form', [['n', 1], ['f', 1.5], ['big', 1e20], ['tiny', 1e-5], [3, 4]], null]]);
  R(F, 'POST', P('/'), null, [['form', [['ключ', 'значение'], ['😀', '\u{1F600}'], ['~*', '-._']], null]]);
  R(F, 'POST', P('/'), null, [['form', [['a', '1']], null], ['set', 'Content-Type', 'text/plain']]);
  R(F, 'POST', P('/'), null, [['form', [['a', '1']], null], ['delete', 'content-type']]);
  R(F, 'POST', P('/'), [['Content-Type', 'text/plain']], [['form', [['a', '1']], null]]);
  R(F, 'GET', U('http://example.com/?x'), null, [['form', [['q', 'ruby']], null]]);
  R(F, 'PUT', P('/'), null, [['form', [['a', 'x'.repeat(10000)]], null]]);
  R(F, 'POST', P('/'), null, [['form', [['a', '1'], ['a', '2']], '\\`|\\\'']]);
  R(F, 'POST', P('/'), null, [['form', [['&', '&']], ';']]);
}

// ---------------------------------------------------------------- request line and versions
{
  const F = 'request_line';
  for (const v of ['1.0', '1.1', '2', '2.0', '', 'HTTP', '1.1 ', ' 1.1', '1.1\r\n', '1.1\n', '1.1\r', 'é', '0.9', '1.1\u0000']) {
    R(F, 'GET', U('http://example.com/'), null, [], v);
  }
  R(F, 'POST', P('/'), null, [['body', 'x']], '1.0');
  R(F, 'POST', P('/'), null, [['body', 'x']], '1.1\n');
  R(F, 'POST', P('/\r'), null, [['body', 'x'], ['set', 'X-A', 'b']], '1.1');
  R(F, 'GET\r', P('/'), null, [['set', 'X-A', 'a\nb']]);
}

// ---------------------------------------------------------------- encode_www_form(_component)
{
  const F = 'form_encode';
  const C = (str) => add(F, { op: 'encode_www_form_component', str });
  const E = (pairs) => add(F, { op: 'encode_www_form', pairs });
  let ascii = '';
  for (let i = 0; i < 128; i++) ascii += String.fromCharCode(i);
  for (const s of ['', ' ', 'a b', '~', '*', '-._', "!'()", '%', '+', '&=', '/?#[]@', 'é', '😀', '\u0000', '\u007f',
    '\r\n', ascii, 'ÿ\u0100\u07ff\u0800\uffff\u{10000}\u{10FFFF}', '\ufeff', 'a'.repeat(5000), '%41', 'AZaz09']) {
    C(s);
  }
  for (const n of [0, 1, -1, 1.5, 1e20, 1e-5, -0.5, 0.1, 100.5, 1e16, 9007199254740992, 1e100, -1e-100, 2.5e-7,
    1e-4, 1 / 3, 1944408542476594.5, -2818667963147163.5, 1e15 + 0.5, 1152921504606847000, 1e21, 1e22]) {
    C(n);
  }
  E([]);
  E([['a', '1']]);
  E([['a', '1'], ['b', '2']]);
  E([['a b', '~ *']]);
  E([['c', null]]);
  E([['c', null], ['d', null]]);
  E([['d', []]]);
  E([['d', []], ['e', []]]);
  E([['a', '1'], ['d', []], ['b', '2']]);
  E([['e', [null, 'x']]]);
  E([['e', ['x', null]]]);
  E([['e', [null]]]);
  E([['e', [null, null]]]);
  E([['e', ['1', '2', '3']]]);
  E([['f', 1.5], ['g', 1e20], ['h', 1e-5], ['i', 42], ['j', -0.0], ['k', 1e16]]);
  E([['', '']]);
  E([['', null]]);
  E([['', 'v']]);
  E([['k', '']]);
  E([['é', 'ü'], ['😀', '\u{1F601}'], ['\u0000', '\u007f']]);
  E([['a&b', 'c=d'], ['%', '+']]);
  E([[1, 2], [1.5, 2.5]]);
  E([['x', [1, 2.5, null, 'y']]]);
  E([['a', 'x'.repeat(3000)]]);
}

// ---------------------------------------------------------------- decode_www_form(_component)
{
  const F = 'form_decode';
  const D = (str, separator) => add(F, separator === undefined
    ? { op: 'decode_www_form', str } : { op: 'decode_www_form', str, separator });
  const C = (str) => add(F, { op: 'decode_www_form_component', str });
  for (const s of ['', 'a', 'a=', '=a', '=', 'a=1&b=2', 'a=1&&b', '&', '&&', 'a=1&', '&a=1', 'a+b=c+d', '%41=%42',
    '%zz=%', '%4', 'a=%ff', 'a=%c3%a9', 'a=%c3', 'a=%e2%82', '%e2%82=%e2%82%ac', 'a=%f0%9f%98%80', 'a=%f0%9f%98',
    'a=%ed%a0%80', 'a=%c0%af', 'a=%f4%90%80%80', 'a=b=c', 'a=%3D&b=%26', 'a=1;b=2', 'é=1', 'a=😀', '\u0000=\u0001',
    'a=1\r\n', 'a=1\nb=2', ' = ', '+', '%2B', '%%', 'a=%2', 'a=%g0', 'a=%0g', 'a=%C3%A9', '%FF%FE=x', 'a=1&a=2',
    'k'.repeat(3000) + '=v']) {
    D(s);
  }
  D('a=1&b=2', '&');
  D('a=1;b=2', ';');
  D('a=1&b=2;c=3', ';');
  D('a=1\n\nb=2', '');
  D('a=1\n\n\nb=2\n', '');
  D('a\nb', '');
  D('\n\na=1', '');
  D('a=1&&b=2&&', '&&');
  D('a=1&b=2', '&&');
  D('a=1\nb=2', '\n');
  D('a=1\r\nb=2', '\r\n');
  D('a=1 b=2', ' ');
  D('a=1=b=2', '=');
  D('a=1éb=2', 'é');
  D('a=1xb=2', 'é');
  D('a=1%26b=2', '%26');
  D('a+1', '+');
  D('', ';');
  for (const s of ['', 'a+b', '%41', '%zz', '%', '%4', '%%', 'a%2', '%ff%fe', '%c3%a9', 'é', '😀', '%u0041',
    '+%2B+', '%0d%0a', '%00', '%zé', 'abc%', '%2x%41', '%E2%82%AC', '%c3', 'x'.repeat(3000) + '%41']) {
    C(s);
  }
}

// ---------------------------------------------------------------- capitalize / each_capitalized
{
  const F = 'capitalize';
  const N = (name) => add(F, { op: 'capitalize', name });
  const E = (fields) => add(F, { op: 'each_capitalized', fields });
  const names = ['x-', '--', '-a', 'a-', 'a--b', '-', '', 'a', 'content-type', 'CONTENT-TYPE', 'cOnTeNt-TyPe',
    'x-forwarded-for', 'ß-x', 'ǆ', 'ǆx', 'Ǆ', 'ǅ', 'ǳ', 'İ', 'İİ', 'i̇', 'ı', 'ŉ', 'ﬁ', 'ﬀ-ﬃ', 'σς', 'ΣΑΣ', 'ΑΣ-Β',
    'ÉCOLE', 'ΐ', 'ᾳ', 'ᾼ', '\u0345', 'www-authenticate', 'a_b', 'a.b', 'a b', '1a', 'é-É', '😀-a', 'ꭰ', 'Ꭰ', 'ᏸ',
    'ა', 'Ა', 'ẞ', 'ſ', 'µ', 'ǰ', 'ꞵ', '\u1C8A', '\u1C89', '\uA7DB', '\u{10D70}', '\u{10D50}', '\u{16EBB}',
    'ǈ-ǋ', 'ⓐ', 'Ⓐ', 'ａｂｃ', 'ΆΈ', '\u0130-\u0049', 'x-\u0000-y', '\t-\n', 'a-\u00a0-b', 'ß'.repeat(10),
    'a'.repeat(2000), 'ǲ', '𐐨-𐐀', '𞤢', 'ꮰ', 'Ⱥ', 'ⱥ', 'ɐ', 'Ɐ'];
  for (const n of names) N(n);
  for (const n of names.slice(0, 40)) E([[n, 'v']]);
  E([]);
  E([['Foo', 'a'], ['FOO', 'b'], ['foo', ['c', 'd']]]);
  E([['\u212a', '1'], ['k', '2'], ['K', '3']]);
  E([['ẞ', '1'], ['ß', '2'], ['SS', '3']]);
  E([['ΑΣ', '1'], ['ας', '2'], ['ασ', '3']]);
  E([['İ', '1'], ['i̇', '2'], ['I', '3'], ['i', '4']]);
  E([['x', ''], ['y', []], ['z', null], ['w', [null, '']]]);
  E([['x', 1], ['x', 2.5], ['x', 1e20]]);
  E([['a', 'v\r\nw']]);
  E([['a', 'ok'], ['b', ['ok', 'bad\n']]]);
  E([['b', 'x'], ['a', 'y'], ['B', 'z']]);
  E([['', 'a'], ['-', 'b'], ['--', 'c']]);
  E([['x-', 'a'], ['X', 'b']]);
  E([['Content-Type', 'text/html'], ['content-type', 'charset=x'], ['Content-Length', '3']]);
}

// ---------------------------------------------------------------- Net::HTTPHeader helpers
// Requests built with the helpers' writers, then every reader (before exec),
// then the bytes.
const ALLQ = [['range'], ['content_range'], ['range_length'], ['content_length'], ['chunked?'],
  ['content_type'], ['main_type'], ['sub_type'], ['type_params'], ['connection_close?'],
  ['connection_keep_alive?'], ['get_fields', 'Content-Type'], ['get_fields', 'X-None'], ['fetch', 'Range'],
  ['fetch', 'X-None'], ['fetch', 'X-Ünï'], ['fetch', 'X-None', 'dflt'], ['fetch', 'X-None', ['a', 1]],
  ['fetch', 'X-None', null], ['fetch_block', 'X-NoNE'], ['fetch_block', 'content-type']];
{
  const F = 'helpers';
  const H = (ops, init = null, method = 'GET') => add(F, { ...req(method, U('http://example.com/p'), init, ops), queries: ALLQ });
  const set = (k, v) => ['set', k, v];
  // readers over values set with []=
  const ranges = ['bytes=0-499', 'bytes=500-999', 'bytes=-500', 'bytes=9500-', 'bytes=0-0,-1', 'bytes=500-600,601-999',
    'bytes=500-700,601-999', 'bytes=0-', 'bytes=-0', 'bytes=00-', 'bytes=0-0', 'bytes=5-4', 'bytes=5-5', 'bytes=05-4',
    'bytes=1-2, 3-4', 'bytes=1-2 ,3-4', 'bytes=1-2,\t3-4', 'bytes=1-2,,3-4', 'bytes=,1-2', 'bytes=, 1-2', 'bytes=1-2,',
    'bytes=1-2,,', 'bytes=1-2, ', 'bytes=1-2, -3', 'bytes=1-2,-3', 'bytes=1-2, ,3-4', 'bytes=1-2-3', 'bytes=-', 'bytes=',
    'bytes=a-b', 'Bytes=1-2', 'bytes =1-2', 'bytes=1-2 ', ' bytes=1-2', 'bytes=99999999999999999999999-1',
    'bytes=1-99999999999999999999999', 'bytes=99999999999999999999998-99999999999999999999999', 'bytes=-99999999999999999999',
    'bytes=0-,0-', 'bytes=0-5,-0', 'bytes=1-2;3-4', 'items=1-2', 'bytes=١-٢', 'bytes=\u0660-1', ''];
  for (const r of ranges) H([set('Range', r)]);
  H([set('Range', ['bytes=1-2', '3-4'])]);
  H([['add', 'Range', 'bytes=1-2'], ['add', 'Range', 'bytes=3-4']]);
  H([], [['Range', 'bytes=1-5']]);
  const crs = ['bytes 0-499/1234', 'bytes 500-999/*', 'bytes 0-0/1', '  bytes 1-2/3', 'bytes\t1-2/3', 'bytes  1-2/3 trailing',
    'bytes 5-1/10', 'bytes 1-2/', 'bytes 1-2', 'bytes1-2/3', 'items 1-2/3', 'Bytes 1-2/3', 'bytes -1-2/3', 'bytes 1--2/3',
    'bytes 99999999999999999999-99999999999999999999999/*', 'b_x 1-2/3', 'é 1-2/3', 'bytes 1-2/*x', 'bytes 1-2/x', '',
    'bytes 007-010/20'];
  for (const v of crs) H([set('Content-Range', v)]);
  const cls = ['123', ' 123 ', '0', '00123', 'abc', '', 'x12y34', '-5', '+5', '1_000', '99999999999999999999999', '١٢',
    '3, 4', '12abc'];
  for (const v of cls) H([set('Content-Length', v)]);
  H([set('Content-Length', ['5', '6'])]);
  const tes = ['chunked', 'Chunked', 'CHUNKED', 'gzip, chunked', 'gzip,chunked', 'xchunked', 'chunkedx', 'chunked-x',
    'x-chunked', '_chunked', 'chunked_', 'chunked;q=1', 'chun\u212Aed', 'chunk\u212Aed', 'échunked', 'chunkedé', '',
    'chunk ed', 'identity', '(chunked)', '1chunked'];
  for (const v of tes) H([set('Transfer-Encoding', v)]);
  const cts = ['text/html', 'text/html; charset=utf-8', ' Text / HTML ; charset = UTF-8 ', 'text', 'text/', '/html', '/',
    '//', 'a//b', 'a/b/c', 'a//', ';', ';;', ';text/html', 'text/html;', 'text/html;;', 'text/html; ', 'text/html;a',
    'text/html;a=', 'text/html;=b', 'text/html;a=b=c', 'text/html; a=1; a=2; b=3', 'text/html;a=1;;b=2', '',
    'multipart/form-data; boundary="x y"', 'text/html; charset=utf-8; q', 'é/ü; ä=ö', 'text/\u000bhtml\u000b',
    'text/html\u0000', '\u0000text/html', 'a/b; c=d;', 'a/b; c=d;;'];
  for (const v of cts) H([set('Content-Type', v)]);
  H([set('Content-Type', [])]);
  H([set('Content-Type', ['text/plain', 'charset=x'])]);
  const conns = ['close', 'Close', ' close ', 'keep-alive', 'Keep-Alive', 'foo, close', 'foo,close', 'close, foo',
    'closed', 'xclose', 'keep-alive, close', 'clo\u017Fe', '\u212Aeep-alive', 'keep-al\u0131ve', '\tclose\t', 'close;',
    ', close', 'close,', 'foo close', 'upgrade'];
  for (const v of conns) H([set('Connection', v)]);
  for (const v of ['close', 'keep-alive', 'x']) H([set('Proxy-Connection', v)]);
  H([set('Connection', ['foo', 'close'])]);
  H([set('Connection', ['foo', 'bar']), set('Proxy-Connection', 'keep-alive')]);
  H([['add', 'Connection', 'a'], ['add', 'Connection', 'close, b']]);
  H([set('X-Ünï', 'yes'), set('Range', 'bytes=1-2')]);
  // the writers
  const auths = [['user', 'pass'], ['', ''], ['ü', 'pässwörd'], ['a:b', 'c'], [null, null], [1, 2.5], [true, false],
    ['x'.repeat(100), 'y'.repeat(100)], ['\r\n', '\u0000'], ['😀', '\u212a']];
  for (const [a, p] of auths) {
    H([['basic_auth', a, p]]);
    H([['proxy_basic_auth', a, p]]);
  }
  H([['basic_auth', 'a', 'b'], set('Authorization', 'Bearer x'), ['basic_auth', 'c', 'd']]);
  const RG = (b, e, x = false) => ({ range: [b, e, x] });
  const setRanges = [[0], [1], [5], [-5], [5.7], [-5.7], [0.5], [-0.5], [99999999999999999999], [-1e20], [1e300],
    [{ int: '123456789012345678901234567890' }], [{ int: '-123456789012345678901234567890' }],
    [0, 10], [5, 1], [5, 0], [5, -1], [5, -6], [5, -10], [-5, 10], [1.5, 2], [1, 2.5], [0, 0.5], [10, -11],
    [RG(0, 9)], [RG(0, 9, true)], [RG(5, 5)], [RG(5, 5, true)], [RG(5, 4)], [RG(-5, -1)], [RG(-5, -1, true)],
    [RG(0, -1)], [RG(5, -1)], [RG(-3, 7)], [RG(3, -7)], [RG(1.5, 3)], [RG(1.5, 3.5, true)], [RG(0, 0)], [RG(0, 0, true)],
    [RG(5, null)], [RG(5, null, true)], [RG(null, 5)], [RG(-1, -1)], [RG(-1, 0, true)], [RG(1, 0, true)], [RG(0, -2)],
    [RG(1e20, 1e21)], [RG({ int: '99999999999999999999' }, { int: '100000000000000000000' })],
    [null], [false], ['5'], [[1, 2]]];
  for (const a of setRanges) H([['set_range', ...a]]);
  H([['set_range', 5], ['set_range', null]]);
  H([set('Range', 'bytes=1-2'), ['set_range', false]]);
  H([], [['Range', 'bytes=1-2']]);
  const setCts = [['text/html'], ['text/html', [['charset', 'utf-8']]], ['text/html', []], ['a/b', [['x', 1], ['y', null], ['z', 2.5]]],
    ['a/b', [['x', '1'], ['x', '2'], ['y', '3']]], ['text/plain\r\nX-Injected: 1'], ['a/b', [['k\n', 'v\r']]], [''],
    ['ÄÖ/ü', [['ß', 'ẞ']]], ['multipart/form-data', [['boundary', 'abc']]]];
  for (const a of setCts) H([['set_content_type', ...a]]);
  H([['form', [['a', '1']], null], ['set_content_type', 'text/plain']]);
  const lens = [0, 5, 5.9, -3, 99999999999999999999, { int: '123456789012345678901234567890' }, '12', '  12', '-12', '+7',
    '1_000', '1__0', '_1', '12abc', 'abc', '', '0x1A', '\n 3', null, false];
  for (const v of lens) H([['content_length=', v]]);
  H([['body', 'hello'], ['content_length=', 99]]);
  H([['content_length=', 7], ['body', 'hello']]);
  H([['set_range', 5], ['basic_auth', 'u', 'p'], ['set_content_type', 'a/b', [['c', 'd']]], ['content_length=', 3]], null, 'POST');
}

// Responses: the readers over what Net::HTTPResponse.read_new read.
{
  const F = 'helpers_response';
  const RH = (head) => add(F, {
    op: 'response_header',
    bytes: Buffer.from(`HTTP/1.1 200 OK\r\n${head}\r\n`, 'latin1').toString('base64'),
    queries: ALLQ,
  });
  const heads = [
    'Content-Type: text/html; charset=utf-8\r\nContent-Length: 0\r\n',
    'Content-Range: bytes 0-99/200\r\nContent-Length: 0\r\n', 'Content-Range: bytes 5-1/*\r\nContent-Length: 0\r\n',
    'Content-Range: items 1-2/3\r\nContent-Length: 0\r\n',
    'Content-Length: 0\r\nContent-Length: 7\r\n', 'Content-Length: 00\r\n', 'Transfer-Encoding: gzip, CHUNKED\r\n\r\n0\r\n',
    'Connection: keep-alive\r\nContent-Length: 0\r\n', 'Connection: Close\r\nContent-Length: 0\r\n',
    'Proxy-Connection: close\r\nConnection: x\r\nContent-Length: 0\r\n',
    'Connection: clo\xc5\xbfe\r\nContent-Length: 0\r\n', 'Transfer-Encoding: chun\xe2\x84\xaaed\r\nContent-Length: 0\r\n',
    'Range: bytes=1-2,5-\r\nContent-Length: 0\r\n', 'Range: bytes=x\r\nContent-Length: 0\r\n',
    'Content-Type: a/b; x=1; x=2\r\nContent-Length: 0\r\n', 'Content-Type: a/b; y\r\nContent-Length: 0\r\n',
    'Content-Type:\r\nContent-Length: 0\r\n', 'X-Ünï: v\r\nContent-Length: 0\r\n'.replace('Ünï', '\xc3\x9cn\xc3\xaf'),
    'Content-Length: 0\r\n',
  ];
  for (const h of heads) RH(h);
}

// ---------------------------------------------------------------- set_form
{
  const F = 'set_form';
  const IO = (bytes) => ({ io: Buffer.from(bytes).toString('base64') });
  const FILE = (name, bytes) => ({ file: { name, base64: Buffer.from(bytes).toString('base64') } });
  const MP = 'multipart/form-data';
  const SF = (params, enctype = MP, opts = { boundary: 'XyZzy' }, pre = [], method = 'POST') =>
    R(F, method, U('http://example.com/upload'), null, [...pre, ['set_form', params, enctype, opts]]);
  SF([['a', '1'], ['b', '2']]);
  SF([['a', '1'], ['b', '2']], null, null);
  SF([['a', '1'], ['b', null], ['c', ['x', 'y']]], 'application/x-www-form-urlencoded', {});
  SF([['q', 'a b&c']], 'Application/X-WWW-Form-Urlencoded', {});
  SF([['a', '1']], 'MULTIPART/FORM-DATA');
  SF([['a', '1']], 'text/plain');
  SF([['a', '1']], 'multipart/form-data; x=1');
  SF([['a', '1']], ' multipart/form-data');
  SF([]);
  SF([['name', 'Zoë'], ['emoji', '😀']]);
  SF([['we"ird\\key', 'v'], ['k', 'line1\r\nline2']]);
  SF([['file', IO([1, 2, 255]), { filename: 'a.bin' }]]);
  SF([['file', IO([1, 2, 255]), { filename: 'a"b\\c.bin', content_type: 'image/png' }]]);
  SF([['file', IO([104, 105])]]);
  SF([['file', IO([200])]]);
  SF([['ü', 'x'], ['file', IO([200])]]);
  SF([['file', IO([200])], ['ü', 'x']]);
  SF([['ü', 'x'], ['file', IO([200]), { filename: 'f' }], ['é', IO([201])]]);
  SF([['file', FILE('/tmp/dir/report.pdf', [37, 80, 68, 70])]]);
  SF([['file', FILE('report.pdf', [1]), { filename: 'other.pdf' }]]);
  SF([['file', FILE('report.pdf', [1]), { filename: null }]]);
  SF([['file', FILE('dir/', [1])]]);
  SF([['file', FILE('', [1])]]);
  SF([['file', 'text content', { filename: 'notes.txt', content_type: 'text/plain' }]]);
  SF([['file', 'text', { filename: '' }]]);
  SF([['k', 'v']], MP, { boundary: '' });
  SF([['k', 'v']], MP, { boundary: 'a b"c' });
  SF([['kü', 'v'], ['f', 'x', { filename: 'naïve€.txt' }]], MP, { boundary: 'B', charset: 'UTF-8' });
  SF([['kü', 'v'], ['f', 'x', { filename: 'naïve€.txt' }]], MP, { boundary: 'B', charset: 'ISO-8859-1' });
  SF([['kü', 'v'], ['f', 'x', { filename: 'naïve€.txt' }]], MP, { boundary: 'B', charset: 'US-ASCII' });
  SF([['k"ü', 'ü'], ['f', IO([200]), { filename: 'ü' }]], MP, { boundary: 'B', charset: 'ISO-8859-1' });
  SF([['a', '1'], ['file', IO([1, 2, 3]), { filename: 'x' }], ['b', '2']], MP, { boundary: 'B' }, [['set', 'Transfer-Encoding', 'chunked']]);
  SF([['a', '1'], ['b', '2']], MP, { boundary: 'B' }, [['set', 'Transfer-Encoding', 'gzip, chunked']]);
  SF([['a', '1'], ['file', IO([]), { filename: 'f.bin' }]], MP, { boundary: 'B' }, [['set', 'Transfer-Encoding', 'chunked']]);
  SF([['a', '1']], MP, { boundary: 'B' }, [['set', 'Content-Length', '999'], ['body', 'old']]);
  SF([['a', '1']], MP, { boundary: 'B' }, [['set_content_type', 'text/html']]);
  R(F, 'POST', U('http://example.com/upload'), null, [['set_form', [['a', '1']], MP, { boundary: 'B' }], ['body', 'replaced']]);
  R(F, 'POST', U('http://example.com/upload'), null, [['set_form', [['a', '1']], MP, { boundary: 'B' }], ['form', [['x', 'y']], null]]);
  R(F, 'POST', U('http://example.com/upload'), null, [['set_form', [['a', '1']], MP, { boundary: 'B' }], ['set', 'Content-Type', 'text/plain']]);
  R(F, 'POST', U('http://example.com/upload'), null, [['set_form', [['a', '1']], MP, { boundary: 'B' }], ['set', 'Content-Type', ' Multipart/Form-Data ; x=y']]);
  SF([['a', '1']], MP, { boundary: 'B' }, [], 'PUT');
  SF([['a', 'x'.repeat(5000)], ['f', IO(new Array(5000).fill(65)), { filename: 'big' }]], MP, { boundary: 'B' });
}

// ---------------------------------------------------------------- body_stream
{
  const F = 'body_stream';
  const S = (pieces, pre = [], method = 'POST', init = null) =>
    R(F, method, U('http://example.com/up'), init, [...pre, ['body_stream', { pieces }]]);
  const TE = ['set', 'Transfer-Encoding', 'chunked'];
  const CL = (n) => ['set', 'Content-Length', n];
  const big = (n, c = 97) => B64(new Array(n).fill(c));
  S(['hello'], [TE]);
  S(['hello', ' ', 'world'], [TE]);
  S(['a', '', 'b'], [TE]); // an empty piece is no read
  S([], [TE]);
  S([''], [TE]);
  S([big(16384)], [TE]);
  S([big(16385)], [TE]);
  S([big(40000), 'tail', big(16383, 98)], [TE]);
  S([B64([0, 13, 10, 255])], [TE]);
  S(['Zoë ✓'], [TE]);
  S(['hello'], [CL('5')]);
  S(['hel', 'lo'], [CL(5)]);
  S(['short'], [CL('99')]); // the length is not checked against the stream
  S([big(40000)], [CL('40000')]);
  S(['x'], [CL('0')]);
  S(['hello']); // neither: ArgumentError
  S(['hello'], [['set', 'Transfer-Encoding', 'gzip']]);
  S(['hello'], [['set', 'Transfer-Encoding', 'gzip, chunked']], 'PUT');
  S(['hello'], [CL('abc')]);
  S(['hello'], [CL('5'), TE]);
  S(['hello'], [TE, ['set', 'Content-Type', 'text/plain']]);
  S(['hello'], [TE, ['body', 'replaced']]);
  S(['hello'], [['body', 'first'], TE]);
  R(F, 'POST', U('http://example.com/up'), null, [TE, ['body_stream', { pieces: ['s'] }], ['body', 'b']]);
  R(F, 'POST', U('http://example.com/up'), null, [TE, ['body_stream', { pieces: ['s'] }], ['form', [['a', '1']], null]]);
  R(F, 'POST', U('http://example.com/up'), null, [TE, ['body_stream', { pieces: ['s'] }], ['set_form', [['a', '1']], 'multipart/form-data', { boundary: 'B' }]]);
  R(F, 'POST', U('http://example.com/up'), null, [TE, ['set_form', [['a', '1']], 'multipart/form-data', { boundary: 'B' }], ['body_stream', { pieces: ['s'] }]]);
  S(['hello'], [TE], 'GET');
  S(['hello'], [TE], 'BREW');
  S(['hello'], [CL('5')], 'POST', [['Expect', '100-continue']]);
  R(F, 'POST', U('http://example.com/up'), null, [TE, ['body_stream', { stringio: big(40000) }]]);
  R(F, 'POST', U('http://example.com/up'), null, [CL('3'), ['body_stream', { stringio: 'abc' }]]);
  R(F, 'POST', U('http://example.com/up'), null, [TE, ['body_stream', { stringio: '' }]]);
}

// ---------------------------------------------------------------- head
// Profile 'head' only: what head's net-http checks and 4.0's does not
// (validate_field_name, MAX_FIELD_LENGTH, set_content_type through
// set_field, CR/LF in a multipart form), with the cases next to each bound.
{
  const F = 'head';
  const H = (ops, init = null, method = 'GET') => add(F, req(method, U('http://example.com/'), init, ops), ['head']);
  const v = (n, ch = 'v') => ch.repeat(n);
  H([['set', 'X-A', v(65536)]]);
  H([['set', 'X-A', v(65537)]]);
  H([['set', 'X-A', v(70000) + '\r\n']]);
  H([['set', 'X-A', ['ok', v(70000)]]]);
  H([['set', 'X-A', ['a\r', v(70000)]]]);
  H([['set', 'X-A', v(21846, 'é')]]);
  H([['set', v(1024, 'k'), 'v']]);
  H([['set', v(1025, 'k'), 'v']]);
  H([['set', v(513, 'é'), 'v']]);
  H([['set', 'X\r\nInjected', 'v\r']]);
  H([['set', 'X:Y', 'v']]);
  H([['set', 'X\u0000', 'v']]);
  H([['set', 'X\u007f', 'v']]);
  H([['set', 'X\tY', 'v']]);
  H([['set', 'Ünï\u0001' + v(40, 'ß'), 'v']]);
  H([['add', 'X\nY', 'v']]);
  H([['add', 'X-A', v(65537)]]);
  H([['set', 'X-A', 'a'], ['add', 'x-a', v(65537)]]);
  H([['set', 'X-A', 'a'], ['add', 'x-a', 'b\n']]);
  H([['set', 'X:Y', null]]);
  H([['delete', 'X:Y']]);
  H([], [['K', v(65536)]]);
  H([], [['K', v(65537)]]);
  H([], [['K', ' ' + v(65536) + ' ']]);
  H([], [['K\u0001', 'v']]);
  H([], [['K:x', 'v']]);
  H([], [['K:x', null]]);
  H([], [[v(1025, 'k'), 'v']]);
  H([], [['K', 'a\r\nb']]);
  H([['set_content_type', 'text/plain\r\nX-Injected: 1']]);
  H([['set_content_type', 'a/b', [['k\n', 'v\r']]]]);
  H([['set_content_type', 'a/' + v(65535, 'b')]]);
  H([['set_content_type', 'text/html', [['charset', 'utf-8']]]]);
  const MP = 'multipart/form-data';
  const SF = (params, opts = { boundary: 'XyZzy' }) => H([['set_form', params, MP, opts]], null, 'POST');
  SF([['a', '1']]);
  SF([['a\r', '1']]);
  SF([['a', '1\r\n']]);
  SF([['f', 'x', { filename: 'a\nb' }]]);
  SF([['f', 'x', { filename: 'a.txt', content_type: 'text/plain\r\nX: 1' }]]);
  SF([['a', '1']], { boundary: 'B\nB' });
  SF([['a\r', '1']], { boundary: 'B\nB' });
  SF([['a\r', '1']], { boundary: 'XyZzy', charset: 'UTF-8' });
  SF([['a', '1'], ['b\n', '2']]);
}

mkdirSync(casesDir, { recursive: true });
let total = 0;
for (const [name, { cases: list }] of Object.entries(files)) {
  writeFileSync(join(casesDir, `${name}.json`), JSON.stringify(list, null, 1) + '\n');
  total += list.length;
  console.log(`${name}.json: ${list.length} cases`);
}
console.log(`total: ${total} cases`);
