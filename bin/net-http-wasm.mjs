#!/usr/bin/env node
// net-http-wasm on the command line: Net::HTTP's bytes for a request, what
// Net::HTTP reads from a response, forms and header names.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import {
  Request, URI, parseResponse, NetHttpError, encodeWwwForm, decodeWwwForm, capitalize,
} from '../js/index.mjs';

const HELP = `Usage: net-http-wasm <command> [options]

Commands:
  request METHOD URL [options]   print the bytes Net::HTTP writes for the request
      -H, --header 'Name: value'   add a header (add_field; repeat for more)
      -F, --form name=value        a form field; name=@path attaches a file
                                   (name=@path;type=image/png;filename=x.png)
      -d, --data BODY              the body (@path reads a file)
      --multipart                  send -F fields as multipart/form-data
                                   (the default when a file is attached)
      --boundary B                 the multipart boundary (default: random)
      --charset C                  the multipart charset
      --http-version V             the request line's version (1.1)
  response [FILE|-] [options]    parse a response (stdin when FILE is - or
                                 missing) and print what Net::HTTP reads as JSON
      --strict                     strict RFC 9112 parsing
      --decode                     decode gzip/deflate bodies (decode_content)
      --method M                   the request's method (HEAD: no body)
  form encode name=value...      URI.encode_www_form
  form decode STRING             URI.decode_www_form (JSON pairs)
  capitalize NAME...             Net::HTTPHeader#capitalize

Options for every command:
  --profile 4.0|3.4              the Ruby whose net/http is reproduced (4.0)
  -h, --help                     this text

Errors are printed as "Class: message" and exit with status 1.`;

class UsageError extends Error {}

function parseArgs(argv) {
  const out = { _: [], H: [], F: [], flags: {} };
  const takes = new Set(['-H', '--header', '-F', '--form', '-d', '--data', '--boundary', '--charset', '--http-version',
    '--method', '--profile']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (takes.has(a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      const v = argv[++i];
      if (a === '-H' || a === '--header') out.H.push(v);
      else if (a === '-F' || a === '--form') out.F.push(v);
      else out.flags[a === '-d' ? '--data' : a] = v;
    } else if (a.startsWith('--') && a.includes('=') && takes.has(a.slice(0, a.indexOf('=')))) {
      argv.splice(i + 1, 0, a.slice(a.indexOf('=') + 1));
      argv[i] = a.slice(0, a.indexOf('='));
      i--;
    } else if (a === '-h' || a === '--help' || a === '--strict' || a === '--decode' || a === '--multipart') {
      out.flags[a === '-h' ? '--help' : a] = true;
    } else if (a.startsWith('-') && a !== '-') {
      throw new UsageError(`unknown option ${a}`);
    } else {
      out._.push(a);
    }
  }
  return out;
}

function readInput(path) {
  return new Uint8Array(readFileSync(path === '-' ? 0 : path));
}

// name=value, name=@path[;type=...][;filename=...]
function formField(spec) {
  const eq = spec.indexOf('=');
  if (eq < 0) throw new UsageError(`-F wants name=value, not ${spec}`);
  const name = spec.slice(0, eq);
  const value = spec.slice(eq + 1);
  if (!value.startsWith('@')) return { entry: [name, value], file: false };
  const [path, ...attrs] = value.slice(1).split(';');
  const opts = { filename: basename(path) };
  for (const a of attrs) {
    const [k, v = ''] = a.split('=');
    if (k === 'type') opts.contentType = v;
    else if (k === 'filename') opts.filename = v;
    else throw new UsageError(`unknown -F attribute ${k}`);
  }
  return { entry: [name, new Uint8Array(readFileSync(path)), opts], file: true };
}

function request(args, profile) {
  const [method, url] = args._;
  if (!method || !url) throw new UsageError('request needs METHOD and URL');
  const target = /^https?:\/\//i.test(url) ? URI(url) : url;
  const req = new Request(method, target, null, { profile });
  for (const h of args.H) {
    const c = h.indexOf(':');
    if (c <= 0) throw new UsageError(`-H wants 'Name: value', not ${h}`);
    req.addField(h.slice(0, c).trim(), h.slice(c + 1).trim());
  }
  const data = args.flags['--data'];
  if (data !== undefined && args.F.length) throw new UsageError('use either -d or -F');
  if (data !== undefined) req.body = data.startsWith('@') ? readInput(data.slice(1)) : data;
  if (args.F.length) {
    const fields = args.F.map(formField);
    const multipart = args.flags['--multipart'] || fields.some((f) => f.file) || args.flags['--boundary'] !== undefined;
    const opts = {};
    if (args.flags['--boundary'] !== undefined) opts.boundary = args.flags['--boundary'];
    if (args.flags['--charset'] !== undefined) opts.charset = args.flags['--charset'];
    req.setForm(fields.map((f) => f.entry), multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded', opts);
  }
  process.stdout.write(req.toBytes(args.flags['--http-version'] || '1.1'));
}

function response(args, profile) {
  const bytes = readInput(args._[0] || '-');
  const res = parseResponse(bytes, {
    profile,
    strict: !!args.flags['--strict'],
    decodeContent: !!args.flags['--decode'],
    requestMethod: args.flags['--method'] || 'GET',
  });
  const out = {
    className: res.className,
    httpVersion: res.httpVersion,
    code: res.code,
    message: res.message,
    headers: res.headerEntries(),
    body: res.body == null ? null : res.bodyText(),
    rest: res.rest && res.rest.length ? Buffer.from(res.rest).toString('latin1') : undefined,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

function form(args, profile) {
  const [sub, ...rest] = args._;
  if (sub === 'encode') {
    const pairs = rest.map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? [p, null] : [p.slice(0, eq), p.slice(eq + 1)];
    });
    process.stdout.write(`${encodeWwwForm(pairs, { profile })}\n`);
  } else if (sub === 'decode') {
    if (rest.length !== 1) throw new UsageError('form decode takes one string');
    process.stdout.write(`${JSON.stringify(decodeWwwForm(rest[0], { profile }))}\n`);
  } else {
    throw new UsageError('form wants encode or decode');
  }
}

export function main(argv) {
  let args;
  try {
    args = parseArgs(argv.slice());
  } catch (e) {
    process.stderr.write(`${e.message}\n\n${HELP}\n`);
    return 2;
  }
  const [cmd] = args._;
  if (args.flags['--help'] || !cmd) {
    process.stdout.write(`${HELP}\n`);
    return args.flags['--help'] ? 0 : 2;
  }
  args._.shift();
  const profile = args.flags['--profile'] || '4.0';
  try {
    if (profile !== '4.0' && profile !== '3.4') throw new UsageError(`--profile must be 4.0 or 3.4, not ${profile}`);
    if (cmd === 'request') request(args, profile);
    else if (cmd === 'response') response(args, profile);
    else if (cmd === 'form') form(args, profile);
    else if (cmd === 'capitalize') {
      for (const n of args._) process.stdout.write(`${capitalize(n, { profile })}\n`);
    } else throw new UsageError(`unknown command ${cmd}`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n\n${HELP}\n`);
      return 2;
    }
    if (e instanceof NetHttpError) process.stderr.write(`${e.rubyClass}: ${e.message}\n`);
    else process.stderr.write(`${e && e.name ? e.name : 'Error'}: ${e && e.message}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
