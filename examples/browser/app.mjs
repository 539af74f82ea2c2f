// The browser example: ruby.wasm 4.0 with Net::HTTP over fetch(), and the
// codec's JS API on its own. Served by examples/browser/serve.mjs; the
// packages are imported by name (index.html's import map says where they are).
import { DefaultRubyVM } from '@ruby/wasm-wasi/dist/browser';
import { init, Request, URI } from 'net-http-wasm';
import { installNetHttp } from 'net-http-wasm/ruby';

const api = new URL(location.href).searchParams.get('api') || 'http://127.0.0.1:8081';
const results = {};
window.__results = results;

function show(id, value, ok = true) {
  const el = document.getElementById(id);
  el.textContent = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  el.className = ok ? 'ok' : 'fail';
  results[id] = value;
}

async function main() {
  const status = document.getElementById('status');
  // the codec's module is compiled asynchronously (a page should not compile
  // synchronously on its main thread)
  await init();
  const module = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
  const { vm } = await DefaultRubyVM(module, { consolePrint: false });
  const { bridge } = installNetHttp(vm); // transport: fetch
  status.textContent = `ruby ${vm.eval('RUBY_VERSION')}, net-http ${vm.eval('Net::HTTP::VERSION')}: running…`;

  const rb = async (code) => JSON.parse((await vm.evalAsync(`require 'json'\n(begin\n${code}\nend).to_json`)).toString());
  const base = JSON.stringify(api);

  // 1. GET
  show('ruby-get', await rb(`
    res = Net::HTTP.get_response(URI(${base} + '/hello?lang=ruby'))
    { code: res.code, message: res.message, content_type: res['content-type'], x_served: res['x-served'],
      class: res.class.name, body: JSON.parse(res.body) }`));
  results.droppedAfterGet = bridge.droppedHeaders.slice();

  // 2. form POST on a kept-alive "connection"
  show('ruby-form', await rb(`
    u = URI(${base})
    Net::HTTP.start(u.host, u.port) do |http|
      req = Net::HTTP::Post.new('/form')
      req.set_form_data('name' => 'Zoë', 'langs' => ['ruby', 'c'], 'q' => 'a b&c')
      res = http.request(req)
      { code: res.code, sent_body: req.body, echo: JSON.parse(res.body) }
    end`));

  // 3. gzip
  show('ruby-gzip', await rb(`
    res = Net::HTTP.get_response(URI(${base} + '/gzip'))
    { code: res.code, content_encoding: res['content-encoding'], body: JSON.parse(res.body)['url'] }`));

  // 4. an error: nothing listens on port 9 (discard) → fetch() fails
  show('ruby-error', await rb(`
    begin
      Net::HTTP.get(URI('http://127.0.0.1:9/'))
    rescue => e
      { class: e.class.name, ancestors: e.class.ancestors.take(3).map(&:to_s), message: e.message }
    end`));

  // 5. JS only: the codec builds the request, fetch() sends it
  const req = new Request('POST', URI(`${api}/form?from=js`), { 'X-Trace': 'page' });
  req.setFormData({ name: 'Zoë', langs: ['ruby', 'c'], tilde: '~' });
  const bytes = req.toBytes();
  const text = new TextDecoder().decode(bytes);
  const [head, body] = text.split('\r\n\r\n');
  const headers = new Headers();
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i);
    if (!/^(host|content-length|accept-encoding|connection)$/i.test(name)) headers.append(name, line.slice(i + 1).trim());
  }
  const r = await fetch(`${api}/form?from=js`, { method: req.method, headers, body });
  show('js-form', { wire: text, status: r.status, echo: await r.json() });

  show('dropped', { 'headers the adapter dropped from the last Ruby request': bridge.droppedHeaders });
  status.textContent = `ruby ${vm.eval('RUBY_VERSION')}, net-http ${vm.eval('Net::HTTP::VERSION')}: done`;
  document.body.dataset.done = '1';
}

main().catch((e) => {
  document.getElementById('status').textContent = `failed: ${e && e.stack ? e.stack : e}`;
  results.error = String(e && e.stack ? e.stack : e);
  document.body.dataset.done = 'error';
});
