// A transport over connections the caller makes: installNetHttp(vm,
// { transport: ({ host, port, tls, timeoutMs }) => Promise<stream> }) where a
// stream is { write(u8), close(), and onData / onEnd / onError set by us }.
import { Conn, NO_LOCAL_END } from '../conn.mjs';
import { failureLines } from '../constants.mjs';
import { errnoOf } from './errno.mjs';

// A connection over a user-supplied duplex: { write(u8), close(), onData, onEnd, onError }.
class StreamConn extends Conn {
  constructor(bridge, stream) {
    super(bridge);
    this.stream = stream;
    stream.onData = (c) => this.onData(c);
    stream.onEnd = () => this.onEnd();
    stream.onError = (e) => {
      const code = errnoOf(e);
      this.onError(code ? `Errno::${code}` : 'IOError', code ? '' : String(e && e.message));
    };
  }
  write(bytes) {
    this.stream.write(bytes);
    return true;
  }
  destroy() {
    if (this.stream.close) this.stream.close();
  }
}

export function streamTransport(makeStream) {
  return {
    blocking: false,
    open(bridge, spec) {
      return Promise.resolve(makeStream(spec)).then(
        (stream) => ({ conn: new StreamConn(bridge, stream), info: NO_LOCAL_END }),
        (e) => {
          const code = errnoOf(e);
          return code ? failureLines({ kind: 'errno', detail: code }) : failureLines({ kind: 'IOError', detail: e && e.message });
        },
      );
    },
    close() {},
  };
}
