// Seeded random oracle cases (format: tests/support/oracle/README.md).
//
//   import { generate } from './random.mjs';
//   const cases = generate(12345, 2000);
//
// The same (seed, count) always gives the same cases.  Strings mix ASCII,
// controls, CR/LF, Latin-1, BMP and astral characters and the characters
// whose case mapping is special; they never contain lone surrogates (a JS
// string can, a Ruby UTF-8 string cannot, so such input is not comparable).
import { prng } from '../prng.mjs';

const SPECIAL = ['ß', 'İ', 'ı', 'ǆ', 'ǅ', 'Ǆ', 'Σ', 'σ', 'ς', '\u212a', 'ŉ', 'ﬁ', '\u0345', 'ΐ', 'ᾳ', 'ẞ', 'ſ',
  'µ', 'ǰ', '\u1c8a', '\ua7db', '\u{10d70}', '\u{16ebb}', 'Ꭰ', 'ꭰ', 'ა', '\u0307', 'i̇', 'Ⓐ', 'ａ', '𐐨', '𞤢',
  'é', 'É', 'ü', 'Ω', 'я', 'Я', '中', '😀', '\u{1F3FB}', '\u200b', '\u2028', '\u00a0', '\u3000', '\ufeff',
  '\u0085', '\u{E0001}', '\u{10FFFF}', '\uFFFF', '\uFFFD'];
const TOKEN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!#$%&\'*+^`|~';
const ASCII_PRINT = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
const HEX = '0123456789abcdefABCDEF';

function makeGen(rand) {
  const int = (n) => Math.floor(rand() * n);
  const chance = (p) => rand() < p;
  const pick = (arr) => arr[int(arr.length)];
  const range = (lo, hi) => lo + int(hi - lo + 1);

  function scalar(lo, hi) {
    for (;;) {
      const cp = range(lo, hi);
      if (cp < 0xd800 || cp > 0xdfff) return String.fromCodePoint(cp);
    }
  }

  // One character from a weighted mix of pools.
  function char(profile = 'any') {
    const r = rand();
    if (profile === 'token') {
      if (r < 0.9) return TOKEN[int(TOKEN.length)];
      if (r < 0.97) return pick(SPECIAL);
      return scalar(0x80, 0x2fff);
    }
    if (profile === 'ascii') {
      if (r < 0.85) return ASCII_PRINT[int(ASCII_PRINT.length)];
      if (r < 0.95) return pick(['%', '+', '&', '=', ';', '%' + HEX[int(22)] + HEX[int(22)]]);
      return String.fromCharCode(int(128));
    }
    if (r < 0.55) return ASCII_PRINT[int(ASCII_PRINT.length)];
    if (r < 0.62) return String.fromCharCode(int(32));
    if (r < 0.64) return '\x7f';
    if (r < 0.76) return pick(SPECIAL);
    if (r < 0.84) return scalar(0x80, 0x7ff);
    if (r < 0.93) return scalar(0x800, 0xffff);
    return scalar(0x10000, 0x10ffff);
  }

  function str(maxLen = 12, profile = 'any') {
    const n = chance(0.02) ? range(100, 400) : int(maxLen + 1);
    let s = '';
    for (let i = 0; i < n; i++) s += char(profile);
    return s;
  }

  // Strings for header values: mostly clean, sometimes padded, rarely CR/LF.
  function headerText() {
    let s = chance(0.7) ? str(16, chance(0.5) ? 'ascii' : 'any').replace(/[\r\n]/g, chance(0.9) ? '' : '\n') : str(8);
    if (chance(0.1)) s = pick([' ', '\t', '\u0000', '\r\n', '\u000b', '  ']) + s;
    if (chance(0.1)) s += pick([' ', '\t', '\u0000', '\r\n', '\r', '\n', '  ']);
    if (chance(0.03)) {
      const cps = Array.from(s);
      s = cps.slice(0, 2).join('') + pick(['\r', '\n', '\r\n']) + cps.slice(2).join('');
    }
    return s;
  }

  function number() {
    const r = rand();
    if (r < 0.3) return range(-1000, 100000);
    if (r < 0.4) return pick([0, 1, -1, 9007199254740991, -9007199254740991, 9007199254740992, 2 ** 60, 1e20, 1e16,
      1e15, 0.1, 0.5, 1.5, -0.5, 1e-4, 1e-5, 2.5e-7, 1 / 3, 100.5, 5e-324, 1.7976931348623157e308]);
    if (r < 0.7) return Math.round((rand() - 0.5) * 10 ** range(0, 8)) / 10 ** range(0, 6);
    const v = (rand() - 0.5) * 10 ** range(-30, 30);
    return Number.isFinite(v) ? v : 1;
  }

  function headerName() {
    const r = rand();
    if (r < 0.35) {
      return pick(['Accept', 'accept', 'ACCEPT', 'User-Agent', 'user-agent', 'Host', 'host', 'Accept-Encoding',
        'accept-encoding', 'Range', 'range', 'Content-Type', 'content-type', 'Content-Length', 'content-length',
        'Transfer-Encoding', 'transfer-encoding', 'X-Foo', 'x-foo', 'X-FOO', 'Cookie', 'Authorization',
        'Connection', 'Expect', 'x-', '-x', '--', '', 'ß', 'İ', 'ǆ-ǳ', '\u212a', 'K', 'k']);
    }
    if (r < 0.85) {
      const parts = Array.from({ length: range(1, 3) }, () => str(8, 'token').replace(/-/g, ''));
      return parts.join(chance(0.1) ? '--' : '-');
    }
    return str(10).replace(/[\r\n]/g, chance(0.95) ? '' : '\n');
  }

  function headerValue(depth = 0) {
    const r = rand();
    if (r < 0.7) return headerText();
    if (r < 0.82) return number();
    if (r < 0.95 && depth < 2) return Array.from({ length: int(4) }, () => headerValue(depth + 1));
    return null;
  }

  function formValue() {
    const r = rand();
    if (r < 0.6) return str(10);
    if (r < 0.75) return number();
    if (r < 0.85) return null;
    return Array.from({ length: int(4) }, () => {
      const q = rand();
      return q < 0.6 ? str(6) : q < 0.8 ? number() : null;
    });
  }

  const formPairs = () => Array.from({ length: int(5) }, () => [chance(0.9) ? str(8) : number(), formValue()]);

  const SEPS = [null, '&', ';', '&amp;', '', '&&', '|', '\r\n', '\\0', '\\&', '\\\\', '\\`', "\\'", '\\1', '\\k<x>',
    '\\', 'é', '😀', '%', '\\\\0'];

  function host() {
    const r = rand();
    if (r < 0.5) return pick(['example.com', 'h', 'EXAMPLE.COM', 'a.b.c', 'x_y.example', 'example.com.', 'localhost']);
    if (r < 0.65) return `${int(256)}.${int(256)}.${int(256)}.${int(256)}`;
    if (r < 0.8) return pick(['[::1]', '[2001:db8::1]', '[::ffff:1.2.3.4]', '[fe80::1]', '[v1.x]', '::1', '[::1']);
    if (r < 0.85) return '';
    return str(8, 'token');
  }

  function uriPart(set) {
    let s = '';
    for (let i = 0, n = int(10); i < n; i++) {
      const r = rand();
      if (r < 0.75) s += set[int(set.length)];
      else if (r < 0.85) s += '%' + HEX[int(22)] + HEX[int(22)];
      else if (r < 0.93) s += pick([' ', '%', '"', '<', '|', '{', '[', ']', '\\', '^', '`', '#', '?']);
      else s += char();
    }
    return s;
  }

  const PCHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@";

  function uri() {
    const scheme = chance(0.9) ? pick(['http', 'https', 'http', 'https', 'HTTP', 'Https', 'hTtP'])
      : pick(['ftp', 'ws', 'foo', 'file']);
    let s = `${scheme}:`;
    if (chance(0.97)) s += '//';
    if (chance(0.15)) s += uriPart(PCHARS.replace(/[@:]/g, '')) + (chance(0.5) ? ':' + uriPart(PCHARS.replace(/[@]/g, '')) : '') + '@';
    s += host();
    if (chance(0.4)) {
      s += ':' + pick(['80', '443', '8080', '0080', '', '0', '65536', '1', String(int(70000)), '99999999999', 'x',
        '-1', ' 80']);
    }
    if (chance(0.85)) {
      for (let i = 0, n = int(4); i < n; i++) s += '/' + uriPart(PCHARS);
      if (chance(0.2)) s += '/';
    }
    if (chance(0.4)) s += '?' + uriPart(PCHARS + '/?');
    if (chance(0.15)) s += '#' + uriPart(PCHARS + '/?');
    return s;
  }

  function path() {
    const r = rand();
    if (r < 0.05) return '';
    if (r < 0.1) return pick(['*', 'p', 'example.com:443', 'http://h/p', '?q']);
    let s = '/' + uriPart(PCHARS);
    if (chance(0.3)) s += '/' + str(6);
    if (chance(0.03)) s += pick(['\r', '\n', '\r\n']);
    return s;
  }

  const CLASSES = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PATCH', 'PROPFIND', 'PROPPATCH',
    'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'];

  function method() {
    const r = rand();
    if (r < 0.7) return pick(CLASSES);
    if (r < 0.82) {
      const m = pick(CLASSES);
      return [...m].map((c) => (chance(0.5) ? c.toLowerCase() : c)).join('');
    }
    if (r < 0.95) return pick(['BREW', 'PURGE', 'M-SEARCH', 'brew', 'LINK', 'GET ', '']);
    return str(6).replace(/[\r\n]/g, chance(0.5) ? '' : '\r');
  }

  function bodyValue() {
    const r = rand();
    if (r < 0.55) return str(30);
    if (r < 0.7) return '';
    if (r < 0.8) return null;
    const bytes = Buffer.alloc(int(64));
    for (let i = 0; i < bytes.length; i++) bytes[i] = int(256);
    return { base64: bytes.toString('base64') };
  }

  function init() {
    if (chance(0.45)) return null;
    const pairs = [];
    for (let i = 0, n = int(5); i < n; i++) {
      let name = headerName();
      if (pairs.length && chance(0.2)) {
        const prev = pick(pairs)[0];
        name = chance(0.5) ? prev.toUpperCase() : prev.toLowerCase();
      }
      let value = chance(0.1) ? null : headerText();
      if (chance(0.01)) name = 'é'.repeat(range(400, 700));
      if (chance(0.005)) value = 'v'.repeat(range(65530, 65540));
      pairs.push([name, value]);
    }
    return pairs;
  }

  function op() {
    const r = rand();
    if (r < 0.35) return ['set', headerName(), headerValue()];
    if (r < 0.6) return ['add', headerName(), chance(0.95) ? headerValue() : null];
    if (r < 0.72) return ['delete', headerName()];
    if (r < 0.82) return ['form', formPairs(), pick(SEPS)];
    return ['body', bodyValue()];
  }

  function request() {
    const target = chance(0.6) ? { uri: uri() } : { path: path() };
    const version = chance(0.85) ? '1.1' : pick(['1.0', '2', '', 'HTTP', '1.1\n', ' 1.1', 'é']);
    return {
      op: 'request', method: method(), target, init: init(),
      ops: Array.from({ length: int(6) }, op), version,
    };
  }

  function caseOf() {
    const r = rand();
    if (r < 0.55) return request();
    if (r < 0.62) return { op: 'encode_www_form', pairs: formPairs() };
    if (r < 0.68) return { op: 'encode_www_form_component', str: chance(0.85) ? str(16) : number() };
    if (r < 0.78) {
      const c = { op: 'decode_www_form', str: chance(0.93) ? str(24, 'ascii') : str(8) };
      if (chance(0.5)) c.separator = pick(['&', ';', '', '\n', '&&', '=', '+', ' ', '%26']);
      return c;
    }
    if (r < 0.85) return { op: 'decode_www_form_component', str: chance(0.9) ? str(20, 'ascii') : str(8) };
    if (r < 0.93) {
      return {
        op: 'each_capitalized',
        fields: Array.from({ length: int(6) }, () => [headerName(), chance(0.9) ? headerValue() : null]),
      };
    }
    return { op: 'capitalize', name: chance(0.5) ? headerName() : str(10) };
  }

  return { caseOf, chance };
}

/** `count` cases from `seed`, ids "random-<seed>-<n>@<profile>". */
export function generate(seed, count) {
  seed = Number(seed) >>> 0;
  const rand = prng(seed);
  const g = makeGen(rand);
  const out = [];
  for (let i = 0; i < count; i++) {
    const profile = g.chance(0.5) ? '4.0' : '3.4';
    const c = g.caseOf();
    out.push({ id: `random-${seed}-${i}@${profile}`, profile, ...c });
  }
  return out;
}
