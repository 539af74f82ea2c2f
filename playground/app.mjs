// The playground page: builds a request and reads a response with the
// package's ESM files, imported by the names index.html's import map gives
// them (no build step; any static host that serves this folder next to js/
// works). The optional Ruby part loads ruby.wasm 4.0, @ruby/wasm-wasi and
// @bjorn3/browser_wasi_shim from ../node_modules on demand.
import { init, Request, URI, parseResponse } from 'net-http-wasm';

const $ = (id) => document.getElementById(id);
const PROFILES = ['4.0', '3.4'];
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const SHOW_MAX = 64 * 1024;

/** What the page computed last, for people in the console and for tests. */
const state = { request: {}, response: {} };
window.__playground = state;

let file = null; // { bytes, name, type } of the chosen file
let boundary = '';

// ---- showing bytes ----

const hex2 = (b) => b.toString(16).padStart(2, '0');

// Appends `bytes` to `el` as text: CR as a marked \r, other control bytes
// and bytes that are not UTF-8 as marked \xNN.
function showBytes(el, bytes) {
  const frag = document.createDocumentFragment();
  let text = '';
  const mark = (s) => {
    if (text) frag.append(text);
    text = '';
    const span = document.createElement('span');
    span.className = 'ctl';
    span.textContent = s;
    frag.append(span);
  };
  const n = Math.min(bytes.length, SHOW_MAX);
  for (let i = 0; i < n; ) {
    const b = bytes[i];
    if (b === 10 || b === 9 || (b >= 0x20 && b < 0x7f)) {
      text += String.fromCharCode(b);
      i++;
    } else if (b === 13) {
      mark('\\r');
      i++;
    } else if (b < 0x80) {
      mark(`\\x${hex2(b)}`);
      i++;
    } else {
      const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      let ch = null;
      try {
        if (len > 1 && i + len <= n) ch = strictUtf8.decode(bytes.subarray(i, i + len));
      } catch {
        ch = null;
      }
      if (ch === null) {
        mark(`\\x${hex2(b)}`);
        i++;
      } else {
        text += ch;
        i += len;
      }
    }
  }
  if (text) frag.append(text);
  if (bytes.length > n) mark(`… ${bytes.length - n} more bytes`);
  el.append(frag);
}

function showError(el, e) {
  el.className = 'error';
  el.textContent = e && e.rubyClass ? `${e.rubyClass}: ${e.message}` : `${e && e.name}: ${e && e.message}`;
}

// ---- the request ----

function lines(text) {
  return text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '');
}

function headerPairs() {
  return lines($('headers').value).map((l) => {
    const i = l.indexOf(':');
    return i < 0 ? [l.trim(), ''] : [l.slice(0, i).trim(), l.slice(i + 1).trim()];
  });
}

function formList() {
  const list = lines($('fields').value).map((l) => {
    const i = l.indexOf('=');
    return i < 0 ? [l, ''] : [l.slice(0, i), l.slice(i + 1)];
  });
  if (file) list.push(['file', file.bytes, { filename: file.name, contentType: file.type || 'application/octet-stream' }]);
  return list;
}

/** The request the form describes, for one profile. */
function buildRequest(profile) {
  const req = new Request($('method').value, URI($('url').value), headerPairs(), { profile });
  const kind = document.querySelector('input[name=bodykind]:checked').value;
  if (kind === 'form') req.setForm(formList(), $('enctype').value, { boundary: $('boundary').value || boundary });
  else if (kind === 'raw') req.body = $('raw').value;
  return req;
}

function updateRequest() {
  for (const profile of PROFILES) {
    const el = $(`req-${profile}`);
    el.textContent = '';
    el.className = '';
    try {
      const bytes = buildRequest(profile).toBytes();
      state.request[profile] = { bytes };
      showBytes(el, bytes);
      $(`len-${profile}`).textContent = `${bytes.length} bytes`;
    } catch (e) {
      state.request[profile] = { error: e.rubyClass ? `${e.rubyClass}: ${e.message}` : String(e) };
      $(`len-${profile}`).textContent = '';
      showError(el, e);
    }
  }
}

// ---- the response ----

function responseBytes() {
  let text = $('response').value;
  if ($('crlf').checked) text = text.replace(/\r?\n/g, '\r\n');
  return utf8.encode(text);
}

function showResponse(el, res) {
  const head = [`${res.className}`, `HTTP/${res.httpVersion ?? '(nil)'} ${res.code} ${res.message ?? '(nil)'}`, ''];
  for (const [k, v] of res.eachCapitalized()) head.push(`${k}: ${v}`);
  head.push('', res.body == null ? 'body: nil' : `body (${res.body.length} bytes):`);
  el.textContent = head.join('\n');
  if (res.body != null) {
    el.append('\n');
    showBytes(el, res.body);
  }
  if (res.rest && res.rest.length) el.append(`\n\n(${res.rest.length} bytes after the message: the next response)`);
}

function updateResponse() {
  const bytes = responseBytes();
  for (const [id, strict] of [['res-lenient', false], ['res-strict', true]]) {
    const el = $(id);
    el.className = '';
    try {
      const res = parseResponse(bytes, { requestMethod: $('res-method').value, decodeContent: $('decode').checked, strict });
      state.response[strict ? 'strict' : 'lenient'] = res.toJSON();
      showResponse(el, res);
    } catch (e) {
      state.response[strict ? 'strict' : 'lenient'] = { error: `${e.rubyClass}: ${e.message}` };
      showError(el, e);
    }
  }
}

// ---- Ruby (optional) ----

let rubyVM = null;

// The VM is made once, on the first Run, by the package's browser entry
// (net-http-wasm/ruby): a WASI from @bjorn3/browser_wasi_shim, rubygems,
// Net::HTTP over fetch().
async function loadRuby(out) {
  out.textContent = 'loading ruby.wasm 4.0…';
  const [wasi, { RubyVM }, { createRubyVM }, ruby] = await Promise.all([
    import('@bjorn3/browser_wasi_shim'),
    import('@ruby/wasm-wasi'),
    import('net-http-wasm/ruby'),
    WebAssembly.compileStreaming(fetch('../node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm')),
  ]);
  // what the code prints goes to a StringIO (below); this catches what
  // reaches the real STDOUT/STDERR
  const { vm } = await createRubyVM({ ruby, RubyVM, wasi, print: (line) => console.log(`ruby: ${line}`) });
  vm.eval(`require 'stringio'`);
  return vm;
}

async function runRuby() {
  const out = $('ruby-out');
  const button = $('run-ruby');
  out.className = '';
  button.disabled = true;
  delete document.body.dataset.ruby;
  try {
    rubyVM ??= await loadRuby(out);
    out.textContent = 'running…';
    const code = JSON.stringify($('ruby').value);
    // $stdout and $stderr both go to the box; an exception is shown as
    // Class: message, as Ruby prints it
    const result = await rubyVM.evalAsync(`
      __out = StringIO.new
      begin
        $stdout = $stderr = __out
        eval(${code}, TOPLEVEL_BINDING, '(playground)')
      rescue Exception => e
        __out.puts "#{e.class}: #{e.message}"
      ensure
        $stdout, $stderr = STDOUT, STDERR
      end
      __out.string`);
    out.textContent = result.toString() || '(no output)';
    document.body.dataset.ruby = 'done';
  } catch (e) {
    showError(out, e);
    document.body.dataset.ruby = 'error';
  } finally {
    button.disabled = false;
  }
}

// ---- wiring ----

async function main() {
  await init();
  boundary = `playground${Math.random().toString(36).slice(2, 12)}`;
  $('boundary').placeholder = `boundary (empty: ${boundary})`;
  const api = new URL(location.href).searchParams.get('api');
  $('ruby').value = `require 'net/http'
uri = URI(${JSON.stringify(api ? `${api}/hello?from=ruby` : 'https://httpbin.org/anything?from=ruby')})
res = Net::HTTP.get_response(uri)
puts res.class, res['content-type'], res.body[0, 400]`;
  $('req-form').addEventListener('input', updateRequest);
  $('req-form').addEventListener('change', updateRequest);
  $('file').addEventListener('change', async () => {
    const f = $('file').files[0];
    file = f ? { bytes: new Uint8Array(await f.arrayBuffer()), name: f.name, type: f.type } : null;
    if (file) {
      $('enctype').value = 'multipart/form-data';
      document.querySelector('input[name=bodykind][value=form]').checked = true;
    }
    updateRequest();
  });
  $('res-form').addEventListener('input', updateResponse);
  $('res-form').addEventListener('change', updateResponse);
  $('run-ruby').addEventListener('click', runRuby);
  updateRequest();
  updateResponse();
  $('status').textContent = 'ready.';
  document.body.dataset.ready = '1';
}

main().catch((e) => {
  $('status').textContent = `failed: ${e && e.stack ? e.stack : e}`;
  document.body.dataset.ready = 'error';
});
