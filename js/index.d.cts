// Type declarations for net-http-wasm, for both module systems: index.d.ts
// (the ES module's) re-exports them, as an ES module may import CommonJS and
// not the other way round. They need neither the DOM library nor @types/node:
// the host's classes below are taken from the globals the project declares.

/** The host's WebAssembly.Module, where the project's libraries declare one. */
type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : object;
/** The host's Blob (a File is one), URL and fetch() Response, where declared. */
type HostBlob = typeof globalThis extends { Blob: { prototype: infer T } } ? T : never;
type HostURL = typeof globalThis extends { URL: { prototype: infer T } } ? T : never;
type HostResponse = typeof globalThis extends { Response: { prototype: infer T } } ? T : FetchResponseLike;

/** What responseFromFetch reads of a fetch() Response. */
export interface FetchResponseLike {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Iterable<[string, string]> & { getSetCookie?(): string[] };
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** What bodyStream reads of a ReadableStream. */
export interface ReadableStreamLike<T> {
  getReader(): { read(): Promise<{ done: boolean; value?: T }>; releaseLock(): void };
}

export type Profile = '4.0' | '3.4' | 'head';
export interface ProfileOptions {
  /**
   * Which MRI to reproduce: '4.0' (net-http 0.9.1, the default), '3.4' (net-http 0.6.0) or
   * 'head' (Ruby 4.1.0 as @ruby/head-wasm-wasi 2.10.1 ships it: 4.0's, with its checks of
   * field names, field sizes and the response head's size).
   */
  profile?: Profile;
}

/** A value Ruby code would pass: String, Integer, Float, true/false. */
export type RubyScalar = string | number | bigint | boolean;
export type FormValue = RubyScalar | null | undefined | ReadonlyArray<RubyScalar | null | undefined>;
export type FormParams =
  | ReadonlyArray<readonly [RubyScalar | null, FormValue?]>
  | Readonly<Record<string, FormValue>>
  | ReadonlyMap<string, FormValue>;
export type HeaderValue = RubyScalar | null | undefined | ReadonlyArray<HeaderValue>;
export type InitHeader =
  | ReadonlyArray<readonly [string, string | number | null | undefined]>
  | Readonly<Record<string, string | number | null | undefined>>
  | ReadonlyMap<string, string | number | null | undefined>;

/** An exception MRI would raise. */
export class NetHttpError extends Error {
  constructor(rubyClass: string, message: string);
  /** The Ruby exception class, e.g. 'ArgumentError', 'URI::InvalidURIError'. */
  readonly rubyClass: string;
}

/** A string marked as a URI, as Ruby's `URI(str)`. */
export class URIReference {
  constructor(href: string);
  readonly href: string;
}
export function URI(str: string | { href: string }): URIReference;

export interface RequestOptions extends ProfileOptions {
  /** For methods Net::HTTP does not define (Net::HTTPGenericRequest). */
  requestHasBody?: boolean;
  responseHasBody?: boolean;
  /**
   * Reject what RFC 9112 forbids even where Ruby lets it through: a method or
   * header name that is not a token, a header value with a control character
   * (NUL, CR, LF, …), a request target with whitespace. Off by default (MRI's behaviour).
   */
  strict?: boolean;
}

/** An Integer: a number, or a BigInt beyond Number.MAX_SAFE_INTEGER. */
export type RubyInteger = number | bigint;

/** Net::HTTPHeader's readers, on Request and Response (computed as MRI does, errors included). */
export interface HeaderReaders {
  /** `range`: [[begin, end], ...]; end -1 is "to the last byte", a negative begin a suffix. */
  range(): Array<[RubyInteger, RubyInteger]> | null;
  /** `content_range`: [first, last], or null (also for a unit other than bytes). */
  contentRange(): [RubyInteger, RubyInteger] | null;
  /** `range_length` */
  rangeLength(): RubyInteger | null;
  /** `content_length` */
  contentLength(): RubyInteger | null;
  /** `chunked?` */
  isChunked(): boolean;
  /** `content_type`: "main/sub" */
  contentType(): string | null;
  /** `main_type` */
  mainType(): string | null;
  /** `sub_type` */
  subType(): string | null;
  /** `type_params` (a null-prototype object in MRI's order) */
  typeParams(): Record<string, string>;
  /** `connection_close?` */
  isConnectionClose(): boolean;
  /** `connection_keep_alive?` */
  isConnectionKeepAlive(): boolean;
  /** `get_fields(name)`: a fresh array, or null. */
  getFields(name: string): string[] | null;
  /** `fetch(name)` (KeyError when absent), `fetch(name, default)`, `fetch(name) { |key| }` (a function: the block). */
  fetch(name: string): string;
  fetch<T>(name: string, block: (downcasedName: string) => T): string | T;
  fetch<T>(name: string, defaultValue: T): string | T;
}

/** A form part's value: a string, bytes (an IO) or a Blob/File. */
export type FormPartValue = string | Uint8Array | HostBlob;
export type FormEntries =
  | ReadonlyArray<readonly [string, FormPartValue] | readonly [string, FormPartValue, { filename?: string | null; contentType?: string }]>
  | Readonly<Record<string, FormPartValue>>;

/** What req.bodyStream takes: pieces are bytes or strings (written as UTF-8). */
export type BodyStreamPiece = Uint8Array | ArrayBuffer | ArrayBufferView | string;
export type BodyStreamSource = ReadableStreamLike<BodyStreamPiece> | AsyncIterable<BodyStreamPiece> | Iterable<BodyStreamPiece>;

/** req.toFetch(): the arguments of fetch(). */
export interface FetchRequest {
  url: string;
  init: { method: string; headers: Array<[string, string]>; body?: Uint8Array };
  dropped: string[];
}

/** Reads a fetch() Response as Net::HTTP reads a response (fetch() already decoded the body). */
export function responseFromFetch(res: HostResponse, options?: ResponseOptions): Promise<Response>;

/** A Ruby Range for setRange: (begin..end) or, with excludeEnd, (begin...end); null for a beginless or endless one. */
export interface RubyRange {
  begin: RubyInteger | null;
  end: RubyInteger | null;
  excludeEnd?: boolean;
}

/** Net::HTTPGenericRequest: `new Request('POST', URI('http://h/p'), { 'X-A': '1' })`. */
export interface Request extends HeaderReaders {}
export class Request {
  /**
   * @param uriOrPath a path; `URI(str)` or a `URL` for a URI; a string starting with
   *   http:// or https:// is taken as a URI; `{ path }` forces a path.
   */
  constructor(method: string, uriOrPath: string | URIReference | HostURL | { path: string }, initHeader?: InitHeader | null, options?: RequestOptions);
  readonly method: string;
  /** The request target written on the request line. */
  readonly path: string;
  /** Whether Net::HTTP would decode a gzip/deflate response to this request. */
  readonly decodeContent: boolean;
  readonly requestBodyPermitted: boolean;
  readonly responseBodyPermitted: boolean;
  /** `req[name] = value`; null or undefined deletes the field. */
  set(name: string, value: HeaderValue): this;
  /** `req[name]`: the values joined with ", ", or null. */
  get(name: string): string | null;
  addField(name: string, value: HeaderValue): this;
  delete(name: string): this;
  setFormData(params: FormParams, sep?: string): this;
  body: string | Uint8Array | null;
  /**
   * `body_stream = source`: read when the request is written, in reads of at
   * most 16 KiB (chunk-framed as MRI's Chunker does when the request is
   * chunked). Needs Content-Length or Transfer-Encoding: chunked.
   */
  bodyStream: BodyStreamSource | null;
  /** The bytes exec writes, piece by piece: the head, then the body as the source gives it. */
  stream(httpVersion?: string): AsyncGenerator<Uint8Array, void, undefined>;
  /** `to_hash`: downcased names → values, in Net::HTTP's order. */
  toHash(): Record<string, string[]>;
  /** The bytes Net::HTTPGenericRequest#exec writes. */
  toBytes(httpVersion?: string): Uint8Array;
  /**
   * `set_form(params, enctype, { boundary, charset })`: entries [key, value] or
   * [key, value, { filename, contentType }]; a Uint8Array is an IO, a Blob/File
   * is read by toBytesAsync() (a File's name is the default filename).
   */
  setForm(params: FormEntries, enctype?: string, options?: { boundary?: string; charset?: string }): this;
  /** What fetch() takes: fetch(url, init); `dropped` names the fields fetch() sets itself. */
  toFetch(url?: string | HostURL): FetchRequest;
  /** toFetch() after reading Blob/File form values. */
  toFetchAsync(url?: string | HostURL): Promise<FetchRequest>;
  /** toBytes() after reading the Blob/File values given to setForm. */
  toBytesAsync(httpVersion?: string): Promise<Uint8Array>;
  /** `basic_auth(account, password)` */
  basicAuth(account: RubyScalar | null, password: RubyScalar | null): this;
  /** `proxy_basic_auth(account, password)` */
  proxyBasicAuth(account: RubyScalar | null, password: RubyScalar | null): this;
  /** `set_range(n)`, `set_range(start, length)`, `set_range(range)`; null or false deletes. */
  setRange(r: RubyInteger | RubyRange | null | false, length?: RubyInteger | null): this;
  /** `set_content_type(type, params)` */
  setContentType(type: string, params?: Readonly<Record<string, RubyScalar | null>> | ReadonlyMap<string, RubyScalar | null> | ReadonlyArray<readonly [string, RubyScalar | null]>): this;
  /** `content_length = len` (a string is read as String#to_i); null or false deletes. */
  setContentLength(len: RubyInteger | string | null | false): this;
}

export function encodeWwwFormComponent(str: RubyScalar, options?: ProfileOptions): string;
export function encodeWwwForm(params: FormParams, sep?: string, options?: ProfileOptions): string;
export function encodeWwwForm(params: FormParams, options?: ProfileOptions): string;
export function decodeWwwFormComponent(str: string, options?: ProfileOptions & { encoding?: 'utf-8' }): string;
export function decodeWwwFormComponent(str: string, options: ProfileOptions & { encoding: 'binary' }): Uint8Array;
export function decodeWwwForm(str: string, options?: ProfileOptions & { separator?: string }): Array<[string, string]>;
export function eachCapitalized(
  fields: ReadonlyArray<readonly [string, HeaderValue]> | Readonly<Record<string, HeaderValue>> | ReadonlyMap<string, HeaderValue>,
  options?: ProfileOptions,
): Array<[string, string]>;
export function capitalize(name: string, options?: ProfileOptions): string;
/** Integer#to_s / Float#to_s of a JS number. */
export function rubyNumberToString(n: number | bigint): string;

export interface ResponseOptions extends ProfileOptions {
  /** The request's method: 'HEAD' responses have no body. Default 'GET'. */
  requestMethod?: string;
  /** res.decode_content = true: decode gzip / x-gzip / deflate bodies. */
  decodeContent?: boolean;
  /** Skip 1xx responses as Net::HTTP#request does. */
  skipInterim?: boolean;
  /**
   * ResponseParser: the request was sent with `Expect: 100-continue` and its
   * body held back (wait_for_continue). A first response 100 gives a
   * 'continue' event and the final response is read next; any other first
   * response (a 1xx included) is the final one. Applies again after reset().
   */
  expectContinue?: boolean;
  /**
   * Not MRI: reject with Net::HTTPBadResponse what RFC 9112 says a recipient
   * must reject (conflicting framing, obs-fold, bare CR, whitespace before a
   * colon, malformed chunk lines, ...) and frame bodies as RFC 9112 does; a
   * Content-Length body cut short is an EOFError. Default false (MRI's leniency).
   */
  strict?: boolean;
  /** Limits (NetHttpWasm::LimitError): status line + header block bytes (1 MiB; 2 MiB under profile 'head'). */
  maxHeaderBytes?: number;
  /** Header lines (10000). */
  maxHeaderFields?: number;
  /** Body bytes as framed on the wire (Infinity). */
  maxBodyBytes?: number;
  /** Body bytes after content decoding (parseResponse: 256 MiB, as it holds the decoded body; ResponseParser: Infinity). */
  maxInflatedBytes?: number;
  /** Where the bytes start in the connection's stream (decoding of a cut-short body depends on it). */
  streamOffset?: number;
  /**
   * ResponseParser: a 'body' event's data is a view of the module's memory
   * (no copy), valid until the next call into the parser or its codec.
   * Default false (a copy).
   */
  bodyViews?: boolean;
}

/** A response as Net::HTTPResponse holds it; strings are decoded on first use. */
export interface Response extends HeaderReaders {}
export class Response {
  /** "1.1", or null where MRI's http_version is nil. */
  readonly httpVersion: string | null;
  /** "200" (a string, as MRI). */
  readonly code: string;
  /** The status as a number. */
  readonly status: number;
  /** The reason phrase, or null where MRI's message is nil. */
  readonly message: string | null;
  readonly messageBytes: Uint8Array | null;
  /** "Net::HTTPOK", ... */
  readonly className: string;
  /** to_hash: downcased names → values (null prototype; names that are array indices come first in JS). */
  readonly headers: Record<string, string[]>;
  /** Whether MRI read a body. */
  readonly hasBody: boolean;
  /**
   * The body, or null where MRI's body is nil; undefined on responses streamed by ResponseParser.
   * A body of up to 4 KiB shares its ArrayBuffer with other bodies (slice() gives its own).
   */
  body: Uint8Array | null | undefined;
  /** The bytes after this message (parseResponse). */
  rest: Uint8Array | undefined;
  /** 1xx responses skipped under skipInterim. */
  interim: Response[] | undefined;
  /** to_hash.to_a, in MRI's order. */
  headerEntries(): Array<[string, string[]]>;
  /** The same as bytes. */
  rawHeaderEntries(): Array<[Uint8Array, Uint8Array[]]>;
  /** res[name]: the values joined with ", ", or null. */
  get(name: string): string | null;
  getFields(name: string): string[] | null;
  has(name: string): boolean;
  eachCapitalized(): Array<[string, string]>;
  /** The body decoded as UTF-8. */
  bodyText(): string | null;
  toJSON(): object;
}

/** Net::HTTPResponse.read_new + reading_body over `bytes` (the stream ends after them). */
export function parseResponse(bytes: Uint8Array | ArrayBuffer | ArrayBufferView | string, options?: ResponseOptions): Response;

export type ResponseEvent =
  | { type: 'continue'; response: Response }
  | { type: 'interim'; response: Response }
  | { type: 'head'; response: Response }
  | { type: 'body'; /** up to 4 KiB: shares its ArrayBuffer with other bodies */ data: Uint8Array }
  | { type: 'end'; response: Response; rest: Uint8Array };

/** An incremental response parser for a connection's bytes. */
export class ResponseParser {
  constructor(options?: ResponseOptions);
  feed(chunk: Uint8Array | ArrayBuffer | ArrayBufferView | string): ResponseEvent[];
  /** The stream ended. */
  finish(): ResponseEvent[];
  /** Starts the next message (the kept bytes are read by the next feed or finish). */
  reset(options?: ResponseOptions): void;
  /** Bytes kept after the message's end. */
  readonly pending: Uint8Array;
  takePending(): Uint8Array;
  /** Frees the WebAssembly side. */
  close(): void;
}

/** One instance of the WebAssembly module. */
export class Codec {
  constructor(source: WasmModule | Uint8Array | ArrayBuffer);
  memorySize(): number;
}

export interface NetHttpApi {
  codec: Codec;
  Request: typeof Request;
  URI: typeof URI;
  URIReference: typeof URIReference;
  NetHttpError: typeof NetHttpError;
  rubyNumberToString: typeof rubyNumberToString;
  encodeWwwFormComponent: typeof encodeWwwFormComponent;
  encodeWwwForm: typeof encodeWwwForm;
  decodeWwwFormComponent: typeof decodeWwwFormComponent;
  decodeWwwForm: typeof decodeWwwForm;
  eachCapitalized: typeof eachCapitalized;
  capitalize: typeof capitalize;
  parseResponse: typeof parseResponse;
  ResponseParser: typeof ResponseParser;
  Response: typeof Response;
}
/** The whole API bound to its own module instance (another build, or isolation). */
export function createNetHttp(source: WasmModule | Uint8Array | ArrayBuffer | Codec): NetHttpApi;

/** Compiles the module asynchronously, for hosts that forbid synchronous compilation. */
export function init(source?: WasmModule | Uint8Array | ArrayBuffer): Promise<void>;
/** The codec the API uses when none is given (the embedded module, or init's; made on first use). */
export function getDefaultCodec(): Codec;
/** The embedded module's bytes, and their sha256. */
export function wasmBytes(): Uint8Array;
export const wasmSha256: string;

// (only what is marked export is exported)
export {};
