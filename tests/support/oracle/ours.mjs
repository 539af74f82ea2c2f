// Runs one oracle case (format: tests/support/oracle/README.md) through our JS API and
// returns a result in the same shape as tests/support/oracle/runner.rb produces, so
// the two compare with deep equality.

const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');

/** Case value -> JS value: {"base64"} is bytes, {"float"} a number, arrays recurse. */
export function jsValue(v) {
  if (Array.isArray(v)) return v.map(jsValue);
  if (v && typeof v === 'object') {
    if ('base64' in v) return new Uint8Array(Buffer.from(v.base64, 'base64'));
    if ('float' in v) return Number(v.float);
    if ('int' in v) return BigInt(v.int);
    throw new Error(`bad case value ${JSON.stringify(v)}`);
  }
  return v;
}

const pairs = (list) => list.map(([k, v]) => [jsValue(k), jsValue(v)]);

function errorResult(api, e, step) {
  let err;
  if (api.NetHttpError && e instanceof api.NetHttpError) {
    err = { class: e.rubyClass, message: e.message };
  } else {
    // Not a Ruby-style error: a bug on our side. Keep it visible in the diff.
    err = { class: `JS ${e && e.name}`, message: `${e && e.message}` };
  }
  if (step !== undefined) err.step = step;
  return { error: err };
}

/** Plain arrays of plain pairs, whatever iterable the API hands back. */
function plainPairs(p) {
  return Array.from(p, (kv) => Array.from(kv));
}

function request(api, c) {
  const profile = c.profile;
  let step = -1;
  try {
    let target;
    if ('uri' in c.target) {
      target = api.URI(c.target.uri);
    } else {
      const p = c.target.path;
      target = typeof p === 'string' && !/^https?:\/\//i.test(p) ? p : { path: p };
    }
    const init = c.init == null ? null : pairs(c.init);
    const req = new api.Request(c.method, target, init, { profile });
    const ops = c.ops || [];
    for (let i = 0; i < ops.length; i++) {
      step = i;
      const op = ops[i];
      switch (op[0]) {
        case 'set': req.set(op[1], jsValue(op[2])); break;
        case 'add': req.addField(op[1], jsValue(op[2])); break;
        case 'delete': req.delete(op[1]); break;
        case 'form':
          if (op[2] == null) req.setFormData(pairs(op[1]));
          else req.setFormData(pairs(op[1]), op[2]);
          break;
        case 'body': req.body = jsValue(op[1]); break;
        case 'basic_auth': req.basicAuth(jsValue(op[1]), jsValue(op[2])); break;
        case 'proxy_basic_auth': req.proxyBasicAuth(jsValue(op[1]), jsValue(op[2])); break;
        case 'set_range': {
          const r = op[1] && typeof op[1] === 'object' && 'range' in op[1]
            ? { begin: jsValue(op[1].range[0]), end: jsValue(op[1].range[1]), excludeEnd: op[1].range[2] }
            : jsValue(op[1]);
          if (op.length > 2) req.setRange(r, jsValue(op[2]));
          else req.setRange(r);
          break;
        }
        case 'set_content_type': req.setContentType(jsValue(op[1]), op.length > 2 ? pairs(op[2]) : undefined); break;
        case 'content_length=': req.setContentLength(jsValue(op[1])); break;
        // an array is a body stream read at once: its pieces as a pipe gives them
        case 'body_stream': req.bodyStream = 'pieces' in op[1] ? op[1].pieces.map(jsValue) : [jsValue(op[1].stringio)]; break;
        case 'set_form': {
          const list = op[1].map(([k, v, h]) => {
            let jv;
            if (v && typeof v === 'object' && 'io' in v) jv = new Uint8Array(Buffer.from(v.io, 'base64'));
            else if (v && typeof v === 'object' && 'file' in v) jv = { bytes: new Uint8Array(Buffer.from(v.file.base64, 'base64')), name: v.file.name };
            else jv = jsValue(v);
            if (h == null) return [k, jv];
            const o = {};
            if ('filename' in h) o.filename = h.filename;
            if ('content_type' in h) o.contentType = h.content_type;
            return [k, jv, o];
          });
          const opts = op[3] || {};
          req.setForm(list, op[2] ?? undefined, opts);
          break;
        }
        default: throw new Error(`unknown op ${op[0]}`);
      }
    }
    step = ops.length;
    const out = { bytes: b64(req.toBytes(c.version ?? '1.1')) };
    if (c.queries) out.queries = queries(api, req, c.queries);
    return out;
  } catch (e) {
    return errorResult(api, e, step);
  }
}

const intS = (v) => (v == null ? null : String(v));

/** Net::HTTPHeader's readers through our API, each caught on its own. */
function queries(api, h, list) {
  return list.map((q) => {
    try {
      switch (q[0]) {
        case 'range': { const r = h.range(); return r && r.map(([a, b]) => [String(a), String(b)]); }
        case 'content_range': { const r = h.contentRange(); return r && r.map(String); }
        case 'range_length': return intS(h.rangeLength());
        case 'content_length': return intS(h.contentLength());
        case 'chunked?': return h.isChunked();
        case 'content_type': return h.contentType();
        case 'main_type': return h.mainType();
        case 'sub_type': return h.subType();
        case 'type_params': return Object.entries(h.typeParams());
        case 'connection_close?': return h.isConnectionClose();
        case 'connection_keep_alive?': return h.isConnectionKeepAlive();
        case 'get_fields': return h.getFields(q[1]);
        case 'fetch': return q.length > 2 ? h.fetch(q[1], jsValue(q[2])) : h.fetch(q[1]);
        case 'fetch_block': return h.fetch(q[1], (k) => `block:${k}`);
        default: throw new Error(`unknown query ${q[0]}`);
      }
    } catch (e) {
      return errorResult(api, e);
    }
  });
}

/** Runs case `c` through `api` (one build's exports). */
export function runOurs(api, c) {
  const profile = c.profile;
  try {
    switch (c.op) {
      case 'request':
        return request(api, c);
      case 'encode_www_form':
        return { string: api.encodeWwwForm(pairs(c.pairs), { profile }) };
      case 'encode_www_form_component':
        return { string: api.encodeWwwFormComponent(jsValue(c.str), { profile }) };
      case 'decode_www_form': {
        const opts = { profile };
        if ('separator' in c) opts.separator = c.separator;
        return { pairs: plainPairs(api.decodeWwwForm(c.str, opts)) };
      }
      case 'decode_www_form_component':
        return { base64: b64(api.decodeWwwFormComponent(c.str, { encoding: 'binary', profile })) };
      case 'each_capitalized':
        return { pairs: plainPairs(api.eachCapitalized(pairs(c.fields), { profile })) };
      case 'capitalize':
        return { string: api.capitalize(jsValue(c.name), { profile }) };
      case 'response_header': {
        const res = api.parseResponse(Buffer.from(c.bytes, 'base64'), { profile });
        return { queries: queries(api, res, c.queries) };
      }
      default:
        throw new Error(`unknown op ${c.op}`);
    }
  } catch (e) {
    return errorResult(api, e);
  }
}
