// Writes every generated constant file from the one schema:
//   schema/codec.mjs  -> src/schema.h (C), js/schema.mjs (JS)
//   schema/bridge.mjs -> src/bridge.h, js/ruby/constants.mjs, ruby/net_http_wasm/constants.rb
// and js/ruby/source.mjs: the bridge's Ruby side as strings, in load order,
// so that installNetHttp needs no file access.
//   node tools/gen-schema.mjs           write the files
//   node tools/gen-schema.mjs --check   exit 1 when a file is not current
import { readFileSync, writeFileSync } from 'node:fs';
import * as codec from '../schema/codec.mjs';
import * as bridge from '../schema/bridge.mjs';

const root = new URL('../', import.meta.url);
const entries = (g) => Object.entries(g).map(([name, [value, doc, extra]]) => ({ name, value, doc, extra }));
const cdoc = (d) => `/* ${d.replace(/\*\//g, '* /')} */`;

// ---- the codec: C ----
const cEnum = (tag, prefix, g) =>
  `typedef enum ${tag} {\n` +
  entries(g).map((e) => `    ${prefix}${e.name} = ${e.value}, ${cdoc(e.doc)}`).join('\n') +
  `\n} ${tag};\n`;
const cDefines = (g) => entries(g).map((e) => `#define NH_${e.name} ${e.value} ${cdoc(e.doc)}`).join('\n') + '\n';
// A common name's id (codec.commonNames) from a hash of its length, first
// and last bytes: the multipliers are searched here so that the names take
// distinct slots; a slot holds its name's id (0: none), and a reader checks
// the bytes.
function nameHash(names) {
  for (let bits = 6; bits <= 10; bits++)
    for (let a = 1; a < 64; a++)
      for (let b = 1; b < 64; b++) {
        const slots = new Array(1 << bits).fill(0);
        let ok = true;
        names.forEach((n, i) => {
          const h = (n.charCodeAt(0) * a + n.charCodeAt(n.length - 1) * b + n.length) & ((1 << bits) - 1);
          if (slots[h]) ok = false;
          slots[h] = i + 1;
        });
        if (ok) return { a, b, mask: (1 << bits) - 1, slots };
      }
  throw new Error('no hash for commonNames');
}
const hash = nameHash(codec.commonNames);
const cNames =
  '/* Common field names (a head block\'s name ids: index + 1), as an initializer. */\n' +
  `#define NH_COMMON_NAMES ${codec.commonNames.map((n) => JSON.stringify(n)).join(', ')}\n` +
  '/* A name\'s slot in NH_NAME_SLOTS (s[0, n), n > 0); the slot holds the id to check, or 0. */\n' +
  `#define NH_NAME_HASH(s, n) (((s)[0] * ${hash.a}u + (s)[(n) - 1] * ${hash.b}u + (n)) & ${hash.mask}u)\n` +
  `#define NH_NAME_SLOTS ${hash.slots.join(', ')}\n`;

// ---- fixed-size records (codec.records): C struct + reader, JS writer ----
const CTYPE = { u8: 'uint8_t', u32: 'uint32_t', u64: 'uint64_t' };
const layout = codec.recordLayout;
const camel = (s) => s.replace(/_(\w)/g, (_, c) => c.toUpperCase());
const recordLens = Object.fromEntries(Object.entries(codec.records).map(([name, rec]) => [`${name.toUpperCase()}_LEN`, [layout(rec).len, `bytes of the ${name} record: ${rec.doc}`]]));
const cRecords =
  '/* Little-endian reads of the records\' fields. */\n' +
  'static inline uint32_t nh_rec_u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }\n' +
  'static inline uint64_t nh_rec_u64(const unsigned char *p) { return (uint64_t)nh_rec_u32(p) | (uint64_t)nh_rec_u32(p + 4) << 32; }\n' +
  Object.entries(codec.records).map(([name, rec]) => {
    const { fields } = layout(rec);
    return `\n${cdoc(`The ${name} record: ${rec.doc}.`)}\ntypedef struct nh_${name}_record {\n` +
      fields.map((f) => `    ${CTYPE[f.type]} ${f.name}; ${cdoc(`@${f.at}: ${f.doc}`)}`).join('\n') +
      `\n} nh_${name}_record;\n${cdoc(`Reads a ${name} record from p (NH_${name.toUpperCase()}_LEN bytes).`)}\n` +
      `static inline void nh_${name}_record_read(const unsigned char *p, nh_${name}_record *r)\n{\n` +
      fields.map((f) => `    r->${f.name} = ${f.type === 'u8' ? `p[${f.at}]` : `nh_rec_${f.type}(p + ${f.at})`};`).join('\n') +
      '\n}\n';
  }).join('');
const jsRecords =
  '// little-endian writes of the records\' fields (Infinity: all ones)\n' +
  'function u32(u8, p, v) {\n  u8[p] = v;\n  u8[p + 1] = v >>> 8;\n  u8[p + 2] = v >>> 16;\n  u8[p + 3] = v >>> 24;\n}\n' +
  'function u64(u8, p, v) {\n  if (v === Infinity) {\n    u32(u8, p, 0xffffffff);\n    u32(u8, p + 4, 0xffffffff);\n  } else {\n    u32(u8, p, v % 4294967296);\n    u32(u8, p + 4, Math.floor(v / 4294967296));\n  }\n}\n' +
  Object.entries(codec.records).map(([name, rec]) => {
    const { fields } = layout(rec);
    const args = fields.map((f) => camel(f.name));
    return `/**\n * Writes a ${name} record (${rec.doc}) at u8[p, p + ${name.toUpperCase()}_LEN):\n` +
      fields.map((f) => ` *   ${camel(f.name)} (${f.type}) ${f.doc}\n`).join('') + ' */\n' +
      `export function write${name[0].toUpperCase()}${camel(name).slice(1)}Record(u8, p, ${args.join(', ')}) {\n` +
      fields.map((f) => (f.type === 'u8' ? `  u8[p + ${f.at}] = ${camel(f.name)};\n` : `  ${f.type}(u8, p + ${f.at}, ${camel(f.name)});\n`)).join('') + '}\n';
  }).join('');

const cBanner = '/* Generated by tools/gen-schema.mjs from schema/codec.mjs: do not edit. */';
const schemaH =
  `${cBanner}\n#ifndef NH_SCHEMA_H\n#define NH_SCHEMA_H\n\n#include <stdint.h>\n\n` +
  cEnum('nh_profile', 'NH_', codec.profiles) + '\n' +
  cEnum('nh_status', 'NH_', codec.status) + '\n' +
  cEnum('nh_error_class', 'NH_', codec.errorClasses) + '\n' +
  '/* Request record operations (the wasm ABI). */\n' + cDefines(codec.requestOps) + '\n' +
  '/* Header readers (nh_header_query). */\n' + cDefines(codec.headerQueries) + '\n' +
  '/* Response parser events. */\n' + cDefines(codec.responseEvents) + '\n' +
  '/* Head block flags. */\n' + cDefines(codec.headFlags) + '\n' +
  '/* Response parser config record flags. */\n' + cDefines(codec.configFlags) + '\n' +
  '/* Sizes and limits. */\n' + cDefines({ ...recordLens, ...codec.limits }) + '\n' + cNames + '\n' + cRecords +
  '\n#endif\n';

// ---- the codec: JS ----
const jsConsts = (g) => entries(g).map((e) => `/** ${e.doc} */\nexport const ${e.name} = ${e.value};\n`).join('');
const classNames = [];
for (const e of entries(codec.errorClasses)) classNames[e.value] = e.extra;
const profileIds = Object.fromEntries(entries(codec.profiles).map((e) => [e.extra, e.value]));
const schemaJs =
  '// Generated by tools/gen-schema.mjs from schema/codec.mjs: do not edit.\n' +
  jsConsts(codec.status) +
  jsConsts(codec.requestOps) +
  jsConsts(codec.headerQueries) +
  jsConsts(codec.responseEvents) +
  jsConsts(codec.headFlags) +
  jsConsts(codec.configFlags) +
  jsConsts({ ...recordLens, ...codec.limits }) +
  jsRecords +
  `/** Ruby exception class names by error class. */\nexport const CLASS_NAMES = Object.freeze(${JSON.stringify(classNames)});\n` +
  `/** Common field names by their id in a head block (0: another name). */\nexport const COMMON_NAMES = Object.freeze(${JSON.stringify([null, ...codec.commonNames])});\n` +
  `/** Profile ids by option string. */\nexport const PROFILES = Object.freeze(Object.assign(Object.create(null), ${JSON.stringify(profileIds)}));\n`;

// ---- the bridge: JS, Ruby, C ----
// the head record (bridge.headRecord)
// (the module copies its lines from a head block, whose strings after the
// class name are these, in this order)
const headLineNames = bridge.headRecord.lines.map(([n]) => n);
if (headLineNames.join() !== 'version,code,message') throw new Error(`headRecord.lines: the head block's version, code, message, not ${headLineNames}`);
const headLines = Object.fromEntries([
  ...bridge.headRecord.lines.map(([n, d], i) => [`HEAD_${n.toUpperCase()}_AT`, [i, `the line of ${d}`]]),
  ['HEAD_FIELDS_AT', [bridge.headRecord.lines.length, "the line of the fields' count"]],
]);
const bridgeEntries = [];
for (const g of [bridge.records, bridge.returnCodes, bridge.states, bridge.sendFlags, bridge.headFlags, headLines, bridge.sizes])
  bridgeEntries.push(...entries(g));
bridgeEntries.push({ name: 'NEED_BASE', value: bridge.NEED_BASE, doc: 'a read needing room returns -(NEED_BASE + size)' });
const banner = 'Generated by tools/gen-schema.mjs from schema/bridge.mjs: do not edit.';
const waiting = Object.keys(bridge.calls).filter((k) => bridge.calls[k].waits);
// ---- the bridge's lines (bridge.lines): a writer and a reader each, JS and Ruby ----
const LINE_TYPES = ['int', 'bool', 'text', 'rest'];
for (const [name, spec] of Object.entries(bridge.lines)) {
  spec.fields.forEach(([f, type], i) => {
    const last = i === spec.fields.length - 1;
    if (!LINE_TYPES.includes(type) && !bridge.lines[type]) throw new Error(`lines.${name}.${f}: unknown type ${type}`);
    if ((type === 'rest' || !LINE_TYPES.includes(type)) && !last) throw new Error(`lines.${name}.${f}: a ${type} only last`);
  });
}
const cap = (s) => s[0].toUpperCase() + s.slice(1);
const snake = (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const jsLineWrite = (type, v) => (type === 'bool' ? `(${v} ? '1' : '0')` : LINE_TYPES.includes(type) ? `${v}` : `${type}Lines(${v})`);
const jsLineRead = (type, v) =>
  type === 'int' ? `Number(${v})` : type === 'bool' ? `${v} === '1'` : LINE_TYPES.includes(type) ? v : `read${cap(type)}Lines(${v})`;
const jsLines =
  '// the first n - 1 lines of s and the rest (fewer when s has fewer lines)\n' +
  'function splitLines(s, n) {\n  const out = [];\n  let at = 0;\n  for (let k; out.length < n - 1 && (k = s.indexOf(\'\\n\', at)) >= 0; at = k + 1) out.push(s.slice(at, k));\n  out.push(s.slice(at));\n  return out;\n}\n' +
  Object.entries(bridge.lines).map(([name, spec]) => {
    const fs = spec.fields;
    const doc = fs.map(([f, type, d]) => ` *   ${f} (${type}) ${d}\n`).join('');
    const w = `/**\n * Writes ${spec.doc}: lines of\n${doc} * A value left undefined ends the lines there.\n */\nexport function ${name}Lines(v) {\n` +
      `  let s = \`\${${jsLineWrite(fs[0][1], `v.${fs[0][0]}`)}}\`;\n` +
      fs.slice(1).map(([f, type]) => `  if (v.${f} === undefined) return s;\n  s += \`\\n\${${jsLineWrite(type, `v.${f}`)}}\`;\n`).join('') +
      '  return s;\n}\n';
    const r = `/** Reads ${name}Lines' String: { ${fs.map(([f]) => f).join(', ')} } (undefined: not in it). */\nexport function read${cap(name)}Lines(s) {\n` +
      `  const a = splitLines(String(s), ${fs.length});\n  return {\n` +
      fs.map(([f, type], i) => `    ${f}: ${i === 0 ? jsLineRead(type, `a[0]`) : `a.length > ${i} ? ${jsLineRead(type, `a[${i}]`)} : undefined`},\n`).join('') +
      '  };\n}\n';
    return w + r;
  }).join('');
// ---- the bridge's lists (bridge.lists): items joined by a separator ----
for (const [name, spec] of Object.entries(bridge.lists)) {
  if (spec.item !== 'text' && !bridge.lines[spec.item]) throw new Error(`lists.${name}: unknown item ${spec.item}`);
  if (spec.sep.length !== 1) throw new Error(`lists.${name}: a separator of one character`);
}
const jsLists = Object.entries(bridge.lists).map(([name, spec]) => {
  const sep = JSON.stringify(spec.sep);
  const text = spec.item === 'text';
  return `/** Writes ${spec.doc}: the items (${text ? 'Strings' : `${spec.item}Lines' values`}) joined by ${sep}. */
` +
    `export function ${name}List(items) {
  return items${text ? '' : `.map(${spec.item}Lines)`}.join(${sep});
}
` +
    `/** Reads ${name}List's String: its items. */
` +
    `export function read${cap(name)}List(s) {
  const t = String(s);
  return t === '' ? [] : t.split(${sep})${text ? '' : `.map(read${cap(spec.item)}Lines)`};
}
`;
}).join('');
const rbLists = Object.entries(bridge.lists).map(([name, spec]) => {
  const sep = JSON.stringify(spec.sep).replace('\\u0000', '\\0');
  const text = spec.item === 'text';
  return `\n    # Reads ${spec.doc}: the items${text ? '' : ` (${cap(spec.item)})`} joined by ${sep}.\n` +
    `    def self.read_${snake(name)}_list(s)\n      s.to_s.split(${sep})${text ? '' : `.map { |item| ${cap(spec.item)}.read(item) }`}\n    end\n`;
}).join('');
// The head record's fields, read as Net::HTTPHeader keeps them. (The hot
// path of every response: a while loop, no block.)
const rbHeadFields = `
    # The fields of a head record (schema/bridge.mjs headRecord) whose lines
    # are a, from its fields' count at line c: Net::HTTPHeader's @header,
    # { name => [values] }. (A name is frozen before it becomes a key: a
    # Hash given a String key that is not frozen interns a frozen copy,
    # which costs as much again as the rest in ruby.wasm.)
    def self.head_fields(a, c)
      n = a[c].to_i
      i = c + 1
      h = {}
      k = i
      e = i + n
      while k < e
        h[a[k].freeze] = [a[k + n]]
        k += 1
      end
      j = i + 2 * n
      e = a.size
      while j < e
        h[a[i + a[j].to_i]] << a[j + 1]
        j += 2
      end
      h
    end
`;
// ---- the request record (bridge.requestRecord) ----
// (the module reads its lines as write_header's method, path, version)
const reqLineNames = bridge.requestRecord.lines.map(([n]) => n);
if (reqLineNames.join() !== 'method,path,version') throw new Error(`requestRecord.lines: write_header's method, path, version, not ${reqLineNames}`);
const rbReqLines = reqLineNames.map((n) => `${n} << "\\n"`).join(' << ');
const rbRequestRecord = `
    # Appends to rec (an empty String) the request record (schema/bridge.mjs
    # requestRecord) of ${reqLineNames.join(', ')} and the fields of @header h.
    # Returns SEND_FLAT (every field has one value) or 0; nil where h holds
    # a key that is not a String or values that are not an Array of Strings
    # (set behind net/http's back), or where a line would hold a "\\n" (the
    # record cannot carry it). (While loops: Hash#flatten, #value? and
    # Array#join cost ten times as much in ruby.wasm.)
    def self.request_record(rec, ${reqLineNames.join(', ')}, h)
      rec << ${rbReqLines}
      ks = h.keys
      n = ks.size
      i = 0
      while i < n
        k = ks[i]
        vs = h[k]
        return nil unless String === k && Array === vs
        break unless vs.size == 1
        v = vs[0]
        return nil unless String === v
        rec << k << "\\n" << v << "\\n"
        i += 1
      end
      if i == n
        flat = SEND_FLAT
        lines = ${reqLineNames.length} + 2 * n
      else
        flat = 0
        rec.clear
        rec << ${rbReqLines}
        lines = ${reqLineNames.length}
        h.each do |key, values|
          return nil unless String === key && Array === values
          rec << key << "\\n" << values.size.to_s << "\\n"
          values.each do |value|
            return nil unless String === value
            rec << value << "\\n"
          end
          lines += 2 + values.size
        end
      end
      return nil unless rec.count("\\n") == lines
      flat
    end
`;
const jsRequestRecord = `/**
 * Writes a request record (schema/bridge.mjs requestRecord): v is
 * { ${reqLineNames.join(', ')}, fields: [[name, [values]], ...] }. Returns
 * { record, flags: SEND_FLAT or 0 }.
 */
export function requestRecord(v) {
  const head = ${reqLineNames.map((n) => `v.${n} + '\\n'`).join(' + ')};
  const flat = v.fields.every(([, vs]) => vs.length === 1);
  const fields = v.fields.map(([k, vs]) => (flat ? \`\${k}\\n\${vs[0]}\\n\` : \`\${k}\\n\${vs.length}\\n\${vs.map((x) => \`\${x}\\n\`).join('')}\`)).join('');
  return { record: head + fields, flags: flat ? SEND_FLAT : 0 };
}
`;
// The JS reader (the module writes head records; JS hands them to Ruby
// unread: this one is for checking them).
const jsHeadRecord = `/**
 * Reads a head record (schema/bridge.mjs headRecord): text, its lines as
 * one String of bytes (one char a byte), after R_HEAD's flags byte; final:
 * R_END's fields (no head lines). { ${headLineNames.join(', ')}, fields:
 * [[name, [values]], ...] in the record's order }.
 */
export function readHeadRecord(text, final = false) {
  const a = text.split('\\n');
  const out = {};
  const c = final ? 0 : ${headLineNames.length};
  if (!final) {
${headLineNames.map((n, i) => `    out.${n} = a[${i}];
`).join('')}  }
  const n = Number(a[c]);
  const fields = [];
  for (let k = 0; k < n; k++) fields.push([a[c + 1 + k], [a[c + 1 + n + k]]]);
  for (let j = c + 1 + 2 * n; j < a.length; j += 2) fields[Number(a[j])][1].push(a[j + 1]);
  out.fields = fields;
  return out;
}
`;
const rbLineRead = (type, v) =>
  type === 'int' ? `${v}&.to_i` : type === 'bool' ? `(${v} && ${v} == '1')` : LINE_TYPES.includes(type) ? v : `(${v} && ${cap(type)}.read(${v}))`;
const rbLineWrite = (type, v) => (type === 'bool' ? `(${v} ? '1' : '0')` : `${v}.to_s`);
const rbLines =
  '\n  # Values that cross between the two sides in one String, lines joined by\n  # "\\n" (schema/bridge.mjs lines): read(string) and #to_s; a value left\n  # out (nil) ends the String there.\n  module Lines\n' +
  Object.entries(bridge.lines).map(([name, spec]) => {
    const fs = spec.fields;
    const vars = fs.map(([f]) => snake(f));
    return `    # ${spec.doc}:\n` + fs.map(([f, type, d]) => `    #   ${snake(f)} (${type}) ${d}\n`).join('') +
      `    ${cap(name)} = Struct.new(${vars.map((v) => `:${v}`).join(', ')}) do\n` +
      `      def self.read(s)\n        ${vars.join(', ')} = s.split("\\n", ${fs.length})\n` +
      `        new(${fs.map(([, type], i) => rbLineRead(type, vars[i])).join(', ')})\n      end\n\n` +
      `      def to_s\n        s = ${rbLineWrite(fs[0][1], vars[0])}.dup\n` +
      fs.slice(1).map(([, type], i) => `        return s if ${vars[i + 1]}.nil?\n        s << "\\n" << ${rbLineWrite(type, vars[i + 1])}\n`).join('') +
      '        s\n      end\n    end\n';
  }).join('') +
  rbLists +
  rbHeadFields +
  rbRequestRecord +
  '  end\n';

const js =
  `// ${banner}\n` +
  bridgeEntries.map((e) => `/** ${e.doc} */\nexport const ${e.name} = ${e.value};\n`).join('') +
  `/** The bridge calls that may wait for the network (schema/bridge.mjs calls). */\nexport const WAITING_CALLS = new Set(${JSON.stringify(waiting)});\n` +
  `/** The TLS settings' keys and types (schema/bridge.mjs tlsSettings). */\nexport const TLS_SETTINGS = Object.freeze(${JSON.stringify(Object.fromEntries(Object.entries(bridge.tlsSettings).map(([k, [type]]) => [k, type])))});\n` +
  jsLines +
  jsLists +
  jsHeadRecord +
  jsRequestRecord +
  Object.entries(bridge.failures).map(([name, [kind, detail, doc]]) => `/** The failure of ${doc}. */\nexport const ${name} = failureLines(${JSON.stringify({ kind, detail })});\n`).join('');
const rb =
  `# frozen_string_literal: true\n# ${banner}\n\nmodule NetHttpWasm\n` +
  bridgeEntries.map((e) => `  # ${e.doc}\n  ${e.name} = ${e.value}\n`).join('') +
  rbLines +
  'end\n';
// C reads the request flags (nh_wasm_write_header, wasm/abi.c); the head
// record's flags (wasm/abi_bridge.c) are the codec's (schema.h).
const bridgeH =
  `/* ${banner} */\n#ifndef NH_BRIDGE_H\n#define NH_BRIDGE_H\n\n` +
  [bridge.sendFlags].flatMap(entries).map((e) => `${cdoc(e.doc)}\n#define NH_${e.name} ${e.value}\n`).join('') +
  `${cdoc("the head record's own lines, before the fields (schema/bridge.mjs headRecord): the head block's version, code, message")}\n#define NH_HEAD_LINES ${headLineNames.length}\n` +
  '\n#endif\n';

// The Ruby side, in the order installNetHttp evaluates it.
const RUBY = [
  'net_http_wasm/compile_cache.rb',
  'net_http_wasm/stand_ins.rb',
  'net_http_wasm.rb',
  'net_http_wasm/constants.rb',
  'net_http_wasm/errors.rb',
  'net_http_wasm/tls.rb',
  'net_http_wasm/socket.rb',
  'net_http_wasm/tcp_socket.rb',
  'net_http_wasm/ssl_socket.rb',
  'net_http_wasm/buffered_io.rb',
  'net_http_wasm/patches.rb',
  'net_http_wasm/collector.rb',
  'net_http_wasm/scheduler.rb',
  'net_http_wasm/thread.rb',
  'net_http_wasm/http_parser.rb',
];
const rubyText = (f) => (f === 'net_http_wasm/constants.rb' ? rb : readFileSync(new URL(`ruby/${f}`, root), 'utf8'));
const source =
  `// Generated by tools/gen-schema.mjs from ruby/: do not edit.\n// The Ruby side, in load order: [file name, source].\n` +
  `export const rubySources = ${JSON.stringify(RUBY.map((f) => [f, rubyText(f)]), null, 1)};\n`;

const files = [
  ['src/schema.h', schemaH],
  ['js/schema.mjs', schemaJs],
  ['src/bridge.h', bridgeH],
  ['js/ruby/constants.mjs', js],
  ['ruby/net_http_wasm/constants.rb', rb],
  ['js/ruby/source.mjs', source],
];
let stale = 0;
for (const [path, text] of files) {
  const url = new URL(path, root);
  let old = null;
  try {
    old = readFileSync(url, 'utf8');
  } catch {}
  if (old === text) continue;
  if (process.argv.includes('--check')) {
    console.error(`${path} is not current: run node tools/gen-schema.mjs`);
    stale++;
  } else writeFileSync(url, text);
}
process.exit(stale ? 1 : 0);
