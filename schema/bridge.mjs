// The byte formats shared by the ruby.wasm bridge's JS side (js/ruby/) and
// its Ruby side (ruby/net_http_wasm/). This is their one definition:
// tools/gen-schema.mjs writes js/ruby/constants.mjs and
// ruby/net_http_wasm/constants.rb from it (run by build.sh; CI checks the
// generated files are current).
import { headFlags as codecHeadFlags } from './codec.mjs';

/** Records the bridge writes into Ruby's receive buffer: u8 type, u32 LE length, payload. */
export const records = {
  R_HEAD: [1, 'a response head (written by the module, wasm/abi_bridge.c): u8 flags (HEAD_*), then the lines of headRecord'],
  R_BODY: [2, 'body bytes'],
  R_END: [3, 'the message ended; the payload is empty, or the fields after decoding (headRecord from its fields\' count on)'],
  R_ERROR: [4, 'an error: lines.failure'],
  R_SIZE: [5, 'after a head: the body is this many bytes (decimal), BODY_DIRECT or more; the records after it may be taken by body() straight into a String'],
  R_LAST: [6, 'body bytes, and the message ended with them (R_BODY then an empty R_END, in one record)'],
};

/** Return codes of the bridge's reads and writes (negative; a read returns a byte count otherwise). */
export const returnCodes = {
  RC_ERROR: [-1, 'an error; the bridge\'s error() says what (lines.failure)'],
  RC_TIMEOUT: [-2, 'the read timeout passed with no data arriving'],
  RC_WOULD_BLOCK: [-4, 'nothing to read yet (a write: no room)'],
  RC_EOF: [-5, 'the stream ended'],
};

/** A read that cannot place the next head record returns -(NEED_BASE + the record's size). */
export const NEED_BASE = 16;

/** Connection states answered by state(). */
export const states = {
  S_EMPTY: [0, 'nothing to read yet'],
  S_DATA: [1, 'data to read'],
  S_END: [2, 'the stream ended, or failed'],
  S_UNSETTLED: [-1, 'settle(): nothing yet, and the host has not looked since Ruby last waited (ask settleLater)'],
};

/** Flags Ruby passes with a request record (Bridge#request; the record: requestRecord). */
export const sendFlags = {
  SEND_BODY: [1, 'a body follows'],
  SEND_RESPONSE_BODY: [2, 'the response may have a body (response_body_permitted?)'],
  SEND_DECODE: [4, 'decode_content'],
  SEND_FLAT: [8, 'every field has one value: "name\\nvalue" pairs'],
};

/**
 * Flags of the head record: the codec's head flags (schema/codec.mjs
 * headFlags) it passes on, under the codec's names.
 */
export const headFlags = Object.fromEntries(['HEAD_VERSION', 'HEAD_MESSAGE', 'HEAD_INFLATE', 'HEAD_DROP_ENCODING'].map((n) => [n, codecHeadFlags[n]]));

/**
 * The head record: R_HEAD's payload after its flags byte (headFlags), and
 * R_END's fields. Lines joined by "\n", none after the last, none holding
 * a "\n" (the parser read them line by line): the head's own `lines`, in
 * this order (the line of each is HEAD_<NAME>_AT), then the fields (R_END:
 * only those, from line 0): their count n, the n names, each field's first
 * value, then (field index, value) for every value after a field's first
 * (Set-Cookie twice...). Written by the module (wasm/abi_bridge.c, which
 * takes the line count from here), read by generated code in Ruby
 * (NetHttpWasm::Lines.head_fields) and JS (readHeadRecord).
 */
export const headRecord = {
  lines: [
    ['version', 'http_version (empty unless HEAD_VERSION)'],
    ['code', 'the status code'],
    ['message', 'the message (empty unless HEAD_MESSAGE)'],
  ],
};

/**
 * The request record: what Ruby writes for a request whose @header Hash it
 * holds (Bridge#request), read by the module (wasm/abi_bridge.c) into the
 * header store the codec's write_header writes from. Lines, each ending in
 * "\n", none holding one: the request's own `lines`, in this order, then
 * the fields: "name\nvalue" pairs when every field has one value
 * (SEND_FLAT), else "name\ncount\nvalue..." per field; names are
 * @header's keys. Written by generated code in Ruby
 * (NetHttpWasm::Lines.request_record) and JS (requestRecord).
 */
export const requestRecord = {
  lines: [
    ['method', 'the method (Net::HTTPGenericRequest#method)'],
    ['path', 'the path (request_uri)'],
    ['version', 'the HTTP version (Net::HTTP::HTTPVersion)'],
  ],
};

/** Sizes both sides use. */
export const sizes = {
  UNSENT_MAX: [64 * 1024, 'bytes written and not yet taken by the OS before a write waits for room (write_timeout)'],
  BODY_DIRECT: [64 * 1024, 'a body of known size from this size on is announced by an R_SIZE record'],
  BODY_SEGMENT: [8 * 1024 * 1024, 'the most body bytes Ruby takes into one String before it hands them to the destination'],
  BODY_WHOLE: [256 * 1024 * 1024, 'the largest body of known size Ruby reads into one String of its size, for an empty String destination (allocated before the bytes arrive: a larger one goes in BODY_SEGMENTs)'],
};

/**
 * The TLS settings Ruby sends with open and starttls (their tlsJson: a JSON
 * object of these keys; a key left out is false, empty or unset), as
 * NetHttpWasm.tls_params (ruby/net_http_wasm/tls.rb) writes them from a
 * Net::HTTP or an SSLContext: [type, meaning]. The bridge rejects a key or
 * a type not declared here; tests/unit/bridge-schema.test.mjs checks that
 * the Ruby side writes only these keys and the transports read only these.
 */
export const tlsSettings = {
  verify: ['boolean', 'the peer is verified (verify_mode other than VERIFY_NONE)'],
  ca: ['string[]', 'certificates to trust, PEM (ca_file, ca_path and cert_store read in the VM)'],
  caFiles: ['string[]', 'files of certificates to trust, read by the host'],
  caDirs: ['string[]', 'folders of certificates to trust, read by the host (ca_path, X509::Store#add_path)'],
  defaultPaths: ['boolean', "the host's default roots are trusted too (no cert_store, or one with set_default_paths)"],
  servername: ['string', 'the name sent as SNI and checked against the certificate'],
  chain: ['boolean', "the peer's chain is sent back for a verify_callback (the peer line of open's reply)"],
  verifyHostname: ['boolean', 'false: the certificate is not checked against the name (verify_hostname = false)'],
  cert: ['string', 'the client certificate, PEM'],
  key: ['string', 'the client private key, PEM'],
  minVersion: ['string', 'the lowest protocol version, as node:tls names it ("TLSv1.2")'],
  maxVersion: ['string', 'the highest protocol version'],
  ciphers: ['string', 'the cipher list, OpenSSL\'s syntax'],
  session: ['string', 'a TLS session to resume (DER in base64, as the session call gives it)'],
  server: ['boolean', "the server's side of the handshake (SSLSocket#accept): cert and key are its own, verify asks for the client's"],
  noProtocols: ['boolean', 'no version the host speaks is allowed (max_version SSL 3.0): the handshake fails as OpenSSL\'s does'],
  failIfNoPeerCert: ['boolean', 'a server refuses a client that sends no certificate (VERIFY_FAIL_IF_NO_PEER_CERT)'],
};

/**
 * Values that cross between the bridge's two sides in one String: lines
 * joined by "\n", in the order declared, each [name, type, meaning]. Types:
 * int (decimal), bool ("1" or "0"), text (one line), rest (the remaining
 * lines as they are), or the name of another of these (its lines); rest
 * and another's name only last. A value left out ends the String there:
 * those after it are left out too (open's TLS values on a plain
 * connection). tools/gen-schema.mjs writes a writer and a reader of each:
 * in JS (js/ruby/constants.mjs) openLines({ id, family, ... }) and
 * readOpenLines(string); in Ruby (ruby/net_http_wasm/constants.rb) a
 * Struct, NetHttpWasm::Lines::Open.read(string) and #to_s.
 */
export const lines = {
  failure: {
    doc: 'what a failed call says: the payload of an R_ERROR record, of error() after RC_ERROR, and, after "!", the reply of open, starttls, listen or accept',
    fields: [
      ['kind', 'text', 'a Ruby exception class (IOError, Errno::ECONNRESET, NetHttpWasm::FetchError...) or one of failureKinds'],
      ['detail', 'rest', "the exception's message (empty: none), or what the kind says it is"],
    ],
  },
  local: {
    doc: "open's local argument: the end to bind the connection to (Net::HTTP#local_host, #local_port)",
    fields: [
      ['host', 'text', 'the address (empty: any)'],
      ['port', 'int', 'the port (0: any)'],
    ],
  },
  open: {
    doc: "open's reply: the connection opened",
    fields: [
      ['id', 'int', 'the connection'],
      ['family', 'text', 'AF_INET or AF_INET6'],
      ['address', 'text', 'the address of its local end'],
      ['port', 'int', 'the port of its local end'],
      ['reused', 'bool', 'TLS: the session given was resumed (SSLSocket#session_reused?)'],
      ['cert', 'text', "TLS: the peer's certificate, DER in base64 (empty: none)"],
      ['check', 'peerCheck', 'TLS with the chain setting: what a verify_callback is given'],
    ],
  },
  upgraded: {
    doc: "starttls's reply: TLS established over the connection, which keeps its id",
    fields: [
      ['reused', 'bool', "as open's"],
      ['cert', 'text', "as open's"],
      ['check', 'peerCheck', "as open's"],
    ],
  },
  peerCheck: {
    doc: 'for a verify_callback (NetHttpWasm.verify_peer), from the host\'s handshake',
    fields: [
      ['peer', 'text', 'the address connected to, "ip:port" ("[ip]:port" for IPv6), as OpenSSL\'s errors name it'],
      ['chain', 'text', 'the certificates the peer presented, leaf first, DER in base64, joined by ","'],
      ['nameOk', 'bool', 'the leaf matches the name Net::HTTP checks'],
      ['trusted', 'rest', 'the certificates the connection trusts, PEM'],
    ],
  },
  settled: {
    doc: 'a wait that settled (an item of lists.settled)',
    fields: [
      ['token', 'int', 'the token its call was given (Bridge#deferred, NetHttpWasm::Scheduler)'],
      ['failed', 'bool', "the promise rejected (the host's defect: a bridge call's promise never rejects): value is the reason, and Ruby raises NetHttpWasm::HostError"],
      ['value', 'rest', "the call's reply"],
    ],
  },
  evaluation: {
    doc: 'vm.evalAsync\'s code, as the bridge holds it for NetHttpWasm.__eval_async (js/ruby/rubywasm-internals.mjs evaluator)',
    fields: [
      ['token', 'int', 'the evaluation, as evalSettled names it'],
      ['code', 'rest', 'the Ruby code'],
    ],
  },
  listening: {
    doc: "listen's reply: the listening socket",
    fields: [
      ['id', 'int', 'the listening socket'],
      ['family', 'text', 'AF_INET or AF_INET6'],
      ['address', 'text', 'the address it listens on'],
      ['port', 'int', 'the port it listens on'],
    ],
  },
  accepted: {
    doc: "accept's reply: the connection accepted (an empty reply: none within the time)",
    fields: [
      ['id', 'int', 'the connection'],
      ['family', 'text', 'AF_INET or AF_INET6'],
      ['address', 'text', 'the address of its local end'],
      ['port', 'int', 'the port of its local end'],
      ['peerAddress', 'text', "the peer's address"],
      ['peerPort', 'int', "the peer's port"],
    ],
  },
};

/**
 * Failures (lines.failure) the host gives from more than one place: NAME:
 * [kind, detail, when]. tools/gen-schema.mjs writes each as a JS constant
 * (its String).
 */
export const failures = {
  CLOSED: ['IOError', 'closed stream', 'a call on a connection or socket that is closed (MRI\'s IOError)'],
};

/**
 * Lists that cross in one String: items joined by sep, each of the lines
 * type `item` (or a text line). tools/gen-schema.mjs writes from each a JS
 * writer (<name>List(items)) and reader (read<Name>List(s)), and a Ruby
 * reader (Lines.read_<name>_list(s)); an empty String is no items.
 */
export const lists = {
  settled: { doc: "takeSettled's reply: the waits that settled since the last call", sep: '\0', item: 'settled' },
  addresses: { doc: "resolve's reply: the addresses a name resolves to, in the resolver's order", sep: '\n', item: 'text' },
};

/**
 * The kinds of a failure (lines.failure) that are not a Ruby class: what
 * opening a connection met, raised as MRI raises it where it connects
 * (NetHttpWasm::Socket.raise_open_error).
 */
export const failureKinds = {
  timeout: 'the connection was not made within open_timeout (detail empty)',
  ssltimeout: 'the TLS handshake did not end within open_timeout (detail empty)',
  errno: "connect(2), bind(2) or listen(2) failed: detail is the errno's name (ECONNREFUSED)",
  resolve: "the host's name did not resolve: detail is the resolver's code (ENOTFOUND, EAI_AGAIN)",
  ssl: "the TLS handshake failed: detail is OpenSSL's message, as MRI's OpenSSL words it",
};

/**
 * The calls Ruby makes on the bridge (NetHttpWasm.bridge: js/ruby/bridge.mjs),
 * by method name: their arguments, their reply, and whether they may wait
 * for the network (`waits`: a waiting transport answers with a promise of
 * the reply, a blocking one blocks, or under NetHttpWasm::Scheduler defers
 * the call: Bridge#deferred). An argument named `[x]` may be left out. A
 * failed call answers RC_ERROR (error() then says why: lines.failure) or,
 * where its reply says so, "!" and lines.failure. tests/unit/bridge-schema.test.mjs checks
 * the Bridge's methods and every call in ruby/ against this table.
 */
export const calls = {
  resolve: { args: ['host'], reply: 'lists.addresses, or "!" and lines.failure (kind resolve)', waits: true },
  open: {
    args: ['host', 'port', 'tlsJson', 'timeoutMs', 'local', 'upgrade'],
    reply: 'lines.open, or "!" and lines.failure',
    waits: true,
  },
  starttls: { args: ['id', 'tlsJson', 'timeoutMs'], reply: 'lines.upgraded, or "!" and lines.failure', waits: true },
  bind: { args: ['id', 'bufAddr', 'bufCap', 'hdrAddr'], reply: '0, or RC_ERROR' },
  request: {
    args: ['id', 'hdrLen', 'flags', '[bodyAddr]', '[bodyLen]', '[hdrAddr]'],
    reply: 'bytes of records written into the receive buffer (0: none yet), -(NEED_BASE + n), or RC_ERROR',
  },
  requestWait: { args: ['id', 'hdrLen', 'flags', 'waitMs'], reply: 'as request, the first records waited for (blocking transports)' },
  recv: { args: ['id', 'timeoutMs'], reply: 'bytes of records written, -(NEED_BASE + n), RC_TIMEOUT or RC_ERROR', waits: true },
  recvNow: { args: ['id'], reply: 'as recv, or RC_WOULD_BLOCK' },
  body: { args: ['id', 'addr', 'cap', 'timeoutMs'], reply: 'body bytes written at addr (0: the next record is not body bytes), RC_TIMEOUT or RC_ERROR', waits: true },
  bodyNow: { args: ['id', 'addr', 'cap'], reply: 'as body, or RC_WOULD_BLOCK' },
  write: { args: ['id', 'addr', 'len'], reply: 'the bytes taken, RC_WOULD_BLOCK or RC_ERROR' },
  drain: { args: ['id', 'timeoutMs'], reply: '1: room to write, 0: timed out', waits: true },
  readNow: { args: ['id', 'addr', 'cap'], reply: 'the bytes read, RC_WOULD_BLOCK, RC_EOF or RC_ERROR' },
  wait: { args: ['id', 'timeoutMs'], reply: '1: readable, 0: timed out', waits: true },
  settle: { args: ['id'], reply: 'S_EMPTY, S_DATA, S_END or S_UNSETTLED' },
  settleLater: { args: ['id'], reply: 'a promise of the state once the event loop has polled' },
  state: { args: ['id'], reply: 'S_EMPTY, S_DATA or S_END' },
  waitAny: { args: ['ids', 'timeoutMs'], reply: '1: one of the connections (ids "1,2") is readable, 0: timed out', waits: true },
  shutdown: { args: ['id'], reply: '0 (the write side ends: close_write)' },
  sockopt: { args: ['id', 'name', 'on'], reply: '0 (TCP_NODELAY: "nodelay", SO_KEEPALIVE: "keepalive", set on the host socket)' },
  listen: { args: ['host', 'port', 'backlog'], reply: 'lines.listening, or "!" and lines.failure', waits: true },
  accept: { args: ['id', 'timeoutMs'], reply: 'lines.accepted of the next connection, "" when timed out, or "!" and lines.failure', waits: true },
  acceptable: { args: ['id'], reply: '1: a connection waits to be accepted (or the listener is gone), 0: none' },
  unlisten: { args: ['id'], reply: '0 (the listening socket is closed)' },
  session: { args: ['id'], reply: 'the TLS session the connection last received (DER in base64), "" if none' },
  close: { args: ['id'], reply: '0' },
  error: { args: [], reply: 'lines.failure of the last RC_ERROR' },
  park: { args: ['promise', 'token'], reply: 'nothing: NetHttpWasm.__wake resumes the fiber once the promise settles' },
  collect: { args: ['promise', 'token'], reply: 'nothing: the value is noted for takeSettled' },
  outcome: { args: ['promise', 'token'], reply: 'a promise of 1 once the promise (any of the program\'s: JS::Object#await) fulfils, 0 once it rejects; its value is kept for outcomeValue' },
  outcomeValue: { args: ['token'], reply: 'the value (or the reason) outcome kept for token, as a JS value, let go of here; undefined if it has not settled' },
  evalSettled: { args: ['token', 'ok', 'value'], reply: 'nothing: vm.evalAsync\'s promise of evaluation token settles, with value (ok 1: the code\'s value, 0: its exception; an RbValue)' },
  takeSettled: { args: [], reply: '"token\\nvalue" of what settled, joined by "\\0"' },
  headroom: { args: [], reply: '0 (malloc is given room at once if the memory has grown: a fiber of the scheduler starts)' },
  whenSettled: { args: ['ms'], reply: 'a promise of 1 (something settled) or 0 (ms passed)' },
  deferred: { args: ['token', 'name', '...args'], reply: '0: the call named is made without blocking, its value noted for takeSettled' },
  forget: { args: ['token'], reply: 'nothing: the deferred wait is dropped' },
  idle: { args: ['ms'], reply: '1: a deferred wait ended, 0: ms passed' },
  compiled: { args: ['keyAddr', 'keyLen'], reply: 'the size of the compiled Ruby kept for that key (ruby/net_http_wasm/compile_cache.rb), 0: none' },
  compiledCopy: { args: ['addr'], reply: '0 (what compiled found, written at addr)' },
  keepCompiled: { args: ['addr', 'len'], reply: '0 (the bytes kept for the key compiled was last given)' },
};
