// Net::HTTPGenericRequest#send_request_with_body_stream: the body of a
// request whose body_stream is set, copied as IO.copy_stream copies it
// (reads of at most 16 KiB: readpartial returns at most what the source has
// at hand, never an empty string), through Net::HTTPGenericRequest::Chunker
// when the request is chunked:
//
//   def write(buf)  @sock.write("#{buf.bytesize.to_s(16)}\r\n", buf, "\r\n")
//   def finish      @sock.write("0\r\n\r\n")

/** IO.copy_stream's read size. */
export const COPY_STREAM_READ = 16384;

const BS_ENCODER = new TextEncoder();

/** Chunker#finish's bytes: the last chunk. */
export const CHUNK_END = BS_ENCODER.encode('0\r\n\r\n');

/** Chunker#write's bytes for buf: its size in hex, CRLF, buf, CRLF. */
export function chunkFrame(buf) {
  const size = BS_ENCODER.encode(`${buf.length.toString(16)}\r\n`);
  const out = new Uint8Array(size.length + buf.length + 2);
  out.set(size);
  out.set(buf, size.length);
  out[out.length - 2] = 13;
  out[out.length - 1] = 10;
  return out;
}

function bsPiece(v) {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') return BS_ENCODER.encode(v);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError('body stream pieces must be Uint8Arrays, ArrayBuffers or strings');
}

/** Whether `source` can be read without waiting: an iterable that is not a stream. */
export function isSyncSource(source) {
  return source != null && typeof source[Symbol.iterator] === 'function' && typeof source !== 'string' &&
    !(source instanceof Uint8Array) && typeof source.getReader !== 'function';
}

/** Checks what `req.bodyStream = source` takes. */
export function checkSource(source) {
  const ok = source != null && (typeof source.getReader === 'function' || typeof source[Symbol.asyncIterator] === 'function' || isSyncSource(source));
  if (!ok) throw new TypeError('bodyStream must be a ReadableStream, an async iterable or an iterable of Uint8Arrays or strings');
}

/** The source's pieces as Uint8Arrays, waiting for each (ReadableStream, async or sync iterable). */
export async function* sourcePieces(source) {
  if (typeof source.getReader === 'function') {
    const reader = source.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield bsPiece(value);
      }
    } finally {
      reader.releaseLock();
    }
  }
  for await (const v of source) yield bsPiece(v);
}

/** The source's pieces, for a sync iterable. */
export function* sourcePiecesSync(source) {
  for (const v of source) yield bsPiece(v);
}

/** What is written for one piece of the source: its 16 KiB reads, framed when chunked. */
export function* framedReads(piece, chunked) {
  for (let at = 0; at < piece.length; at += COPY_STREAM_READ) {
    const read = piece.subarray(at, Math.min(at + COPY_STREAM_READ, piece.length));
    yield chunked ? chunkFrame(read) : read;
  }
}

/** Chunker#finish, when chunked. */
export function* streamEnd(chunked) {
  if (chunked) yield CHUNK_END.slice();
}
