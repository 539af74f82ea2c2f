#!/usr/bin/env node
// net-http-wasm on the command line: Net::HTTP's bytes for a request, what
// Net::HTTP reads from a response, forms and header names.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import {
  Request, URI, parseResponse, NetHttpError, encodeWwwForm, decodeWwwForm, capitalize,
} from '../js/index.mjs';
import { PROFILES } from '../js/schema.mjs';

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
  --profile 4.0|3.4|head         the Ruby whose net/http is reproduced (4.0)
  -h, --help                     this text
  --version                      the package's version

An option's value may follow it (--boundary B) or be joined with = (--boundary=B);
-- ends the options. Errors are printed as "Class: message" and exit with
status 1; usage errors print this text on stderr and exit with status 2.`;

class UsageError extends Error {}

const COMMANDS = ['request', 'response', 'form', 'capitalize'];

// The options, as util.parseArgs takes them.
const OPTIONS = {
  header: { type: 'string', short: 'H', multiple: true },
  form: { type: 'string', short: 'F', multiple: true },
  data: { type: 'string', short: 'd' },
  multipart: { type: 'boolean' },
  boundary: { type: 'string' },
  charset: { type: 'string' },
  'http-version': { type: 'string' },
  strict: { type: 'boolean' },
  decode: { type: 'boolean' },
  method: { type: 'string' },
  profile: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};

// The command each option belongs to (the others: every command).
const OPTION_COMMAND = {
  header: 'request', form: 'request', data: 'request', multipart: 'request', boundary: 'request', charset: 'request',
  'http-version': 'request', strict: 'response', decode: 'response', method: 'response',
};

// The command line as { command, positionals, values }. util.parseArgs
// reads it (strict off, so that a value may start with "-", as in -d -1, and
// so that the errors below can say what was wrong); each token is then
// checked: a known option, a value where one is needed and none where none
// is, and an option of the command given.
function readArgs(argv) {
  const { tokens } = parseArgs({ args: argv, options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const values = {};
  const positionals = [];
  const used = [];
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    if (t.kind !== 'option') continue;
    const spec = Object.hasOwn(OPTIONS, t.name) ? OPTIONS[t.name] : null;
    if (!spec) throw new UsageError(`unknown option ${t.rawName}`);
    if (spec.type === 'string') {
      if (t.value === undefined) throw new UsageError(`${t.rawName} needs a value`);
      if (spec.multiple) (values[t.name] ??= []).push(t.value);
      else values[t.name] = t.value;
    } else {
      if (t.value !== undefined) throw new UsageError(`${t.rawName} takes no value`);
      values[t.name] = true;
    }
    used.push(t);
  }
  const [command, ...rest] = positionals;
  if (COMMANDS.includes(command) && !values.help) {
    for (const t of used) {
      const owner = OPTION_COMMAND[t.name];
      if (owner && owner !== command) throw new UsageError(`${t.rawName} is an option of ${owner}, not of ${command}`);
    }
  }
  return { command, positionals: rest, values };
}

function version() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
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

function request({ positionals, values }, profile) {
  const [method, url, ...extra] = positionals;
  if (!method || !url) throw new UsageError('request needs METHOD and URL');
  if (extra.length) throw new UsageError(`request takes METHOD and URL, then options; unexpected ${extra[0]}`);
  const target = /^https?:\/\//i.test(url) ? URI(url) : url;
  const req = new Request(method, target, null, { profile });
  for (const h of values.header ?? []) {
    const c = h.indexOf(':');
    if (c <= 0) throw new UsageError(`-H wants 'Name: value', not ${h}`);
    req.addField(h.slice(0, c).trim(), h.slice(c + 1).trim());
  }
  const data = values.data;
  const formSpecs = values.form ?? [];
  if (data !== undefined && formSpecs.length) throw new UsageError('use either -d or -F');
  if (data !== undefined) req.body = data.startsWith('@') ? readInput(data.slice(1)) : data;
  if (formSpecs.length) {
    const fields = formSpecs.map(formField);
    const multipart = values.multipart || fields.some((f) => f.file) || values.boundary !== undefined;
    const opts = {};
    if (values.boundary !== undefined) opts.boundary = values.boundary;
    if (values.charset !== undefined) opts.charset = values.charset;
    req.setForm(fields.map((f) => f.entry), multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded', opts);
  }
  process.stdout.write(req.toBytes(values['http-version'] || '1.1'));
}

function response({ positionals, values }, profile) {
  if (positionals.length > 1) throw new UsageError(`response reads one FILE (or - for stdin); unexpected ${positionals[1]}`);
  const bytes = readInput(positionals[0] || '-');
  const res = parseResponse(bytes, {
    profile,
    strict: !!values.strict,
    decodeContent: !!values.decode,
    requestMethod: values.method || 'GET',
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

function form({ positionals }, profile) {
  const [sub, ...rest] = positionals;
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

function usageError(e) {
  process.stderr.write(`${e.message}\n\n${HELP}\n`);
  return 2;
}

/** Runs the command line `argv` (without node and the script); returns the exit status. */
export function main(argv) {
  let args;
  try {
    args = readArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) return usageError(e);
    throw e;
  }
  const { command, values } = args;
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === undefined) {
    process.stdout.write(`${HELP}\n`);
    return 2;
  }
  const profile = values.profile || '4.0';
  try {
    if (!(profile in PROFILES)) throw new UsageError(`--profile must be ${Object.keys(PROFILES).join(', ')}, not ${profile}`);
    if (command === 'request') request(args, profile);
    else if (command === 'response') response(args, profile);
    else if (command === 'form') form(args, profile);
    else if (command === 'capitalize') {
      for (const n of args.positionals) process.stdout.write(`${capitalize(n, { profile })}\n`);
    } else throw new UsageError(`unknown command ${command}`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) return usageError(e);
    if (e instanceof NetHttpError) process.stderr.write(`${e.rubyClass}: ${e.message}\n`);
    else process.stderr.write(`${e && e.name ? e.name : 'Error'}: ${e && e.message}\n`);
    return 1;
  }
}

// a reader that goes away (`| head`) ends the output, as it ends a Unix tool's
process.stdout.on('error', (e) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(process.exitCode || 0);
});
process.exitCode = main(process.argv.slice(2));
