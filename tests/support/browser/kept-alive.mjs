// A started Net::HTTP over responses of the API server (worker-server.mjs)
// that their heads frame differently: chunked, a Content-Length, a HEAD,
// chunked again, a gzipped chunked body (decoded by the browser, by
// Net::HTTP natively) and a 1-byte body. The program's value: each
// response as Ruby reads it (code, Transfer-Encoding, Content-Length,
// Content-Encoding, chunked?, the body's bytes), and whether each request
// went on the socket of the one before (`kept`). readKeptAlive runs it in a
// browser VM and in Debian's Ruby against the same server.
import { runNative } from './harness.mjs';

function keptAliveProgram(api) {
  return `
    uri = URI('${api}')
    http = Net::HTTP.start(uri.host, uri.port)
    ios = []
    read = [['GET', '/text?s=chunked'], ['GET', '/bytes?n=3'], ['HEAD', '/bytes?n=3'], ['GET', '/text?s=again'],
            ['GET', '/gzip?s=zipped'], ['GET', '/bytes?n=1']].map do |method, path|
      res = http.send_request(method, path)
      ios << http.instance_variable_get(:@socket).io.object_id
      [method, path, res.code, res['transfer-encoding'], res['content-length'], res['content-encoding'], res.chunked?, res.body&.bytes]
    end
    http.finish
    { 'read' => read, 'kept' => ios.each_cons(2).map { |a, b| a == b } }`;
}

// { browser, native }: the program's value from inBrowser(code) (a VM's
// JSON of it) and from Debian's Ruby.
export async function readKeptAlive(api, inBrowser) {
  const code = keptAliveProgram(api);
  return { browser: await inBrowser(code), native: JSON.parse(await runNative(`puts(begin\n${code}\nend.to_json)`)) };
}
