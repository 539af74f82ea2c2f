// ResponseParser with expectContinue, as Net::HTTPGenericRequest#wait_for_continue
// and Net::HTTP#transport_request read a request sent with Expect: 100-continue:
// a first response 100 gives a 'continue' event and the final response is read
// next; any other first response is the final one (MRI sends no body then:
// checked against native MRI, a 417 and a 103 each end the request, with the
// 103 as the response). The final response is what parseResponse reads from
// the bytes after the 100's head; every split of the input gives the same
// events, on both builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from '../support/builds.mjs';

const enc = (s) => new TextEncoder().encode(s);
const CONT = 'HTTP/1.1 100 Continue\r\nX-Seen: 1\r\n\r\n';
const FINAL = 'HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n';
const INPUTS = {
  continued: CONT + FINAL,
  'continued, no fields': 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
  'continued, an interim after': CONT + 'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n' + FINAL,
  'continued, then the next response': CONT + 'HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n\r\n',
  refused: 'HTTP/1.1 417 Expectation Failed\r\nContent-Length: 3\r\n\r\nno!',
  'early hints first': 'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n' + FINAL,
  'read to EOF': CONT + 'HTTP/1.0 200 OK\r\n\r\nuntil the end',
};

// Events with their responses summarized and body pieces joined, for comparing.
function summary(events) {
  const out = [];
  for (const e of events) {
    if (e.type === 'body') {
      const last = out[out.length - 1];
      if (last && last.type === 'body') last.data += Buffer.from(e.data).toString('latin1');
      else out.push({ type: 'body', data: Buffer.from(e.data).toString('latin1') });
    } else {
      const r = e.response;
      out.push({ type: e.type, className: r.className, code: r.code, headers: r.headerEntries(),
        ...(e.type === 'end' ? { rest: Buffer.from(e.rest).toString('latin1') } : {}) });
    }
  }
  return out;
}

function feedAll(api, bytes, cuts, options) {
  const p = new api.ResponseParser(options);
  const events = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...p.feed(bytes.subarray(at, cut)));
    at = cut;
  }
  events.push(...p.finish());
  const out = summary(events);
  // an end's rest is what followed it in its feed; the parser keeps all that followed
  const end = out.find((e) => e.type === 'end');
  if (end) end.rest = Buffer.from(p.pending).toString('latin1');
  p.close();
  return out;
}

for (const { name, api } of builds) {
  test(`${name}: a 100 is a 'continue' event, then the final response as parseResponse reads it`, () => {
    for (const skipInterim of [true, false]) {
      const opts = { expectContinue: true, skipInterim };
      const got = feedAll(api, enc(INPUTS.continued), [], opts);
      assert.equal(got[0].type, 'continue');
      assert.equal(got[0].className, 'Net::HTTPContinue');
      assert.deepEqual(got[0].headers, [['x-seen', ['1']]]);
      const res = api.parseResponse(enc(FINAL));
      assert.deepEqual(got.slice(1).map((e) => e.type), ['head', 'body', 'end']);
      assert.equal(got[1].className, 'Net::HTTPCreated');
      assert.equal(got[2].data, Buffer.from(res.body).toString('latin1'));
      // after the continue, the parser is Net::HTTP#request's: 1xx skipped with skipInterim
      const after = feedAll(api, enc(INPUTS['continued, an interim after']), [], opts).map((e) => e.type);
      assert.deepEqual(after, skipInterim ? ['continue', 'interim', 'head', 'body', 'end'] : ['continue', 'head', 'end']);
    }
    // without the option a 100 is read as read_new reads any response
    const plain = feedAll(api, enc(INPUTS.continued), [], {});
    assert.deepEqual(plain.map((e) => e.type), ['head', 'end']);
    assert.equal(plain[0].className, 'Net::HTTPContinue');
  });

  test(`${name}: any other first response is the final one (a 103 too, even with skipInterim)`, () => {
    const refused = feedAll(api, enc(INPUTS.refused), [], { expectContinue: true, skipInterim: true });
    assert.deepEqual(refused.map((e) => [e.type, e.className]), [['head', 'Net::HTTPExpectationFailed'], ['body', undefined], ['end', 'Net::HTTPExpectationFailed']]);
    const hints = feedAll(api, enc(INPUTS['early hints first']), [], { expectContinue: true, skipInterim: true });
    assert.deepEqual(hints.map((e) => [e.type, e.className]), [['head', 'Net::HTTPEarlyHints'], ['end', 'Net::HTTPEarlyHints']]);
    assert.equal(hints[1].rest, FINAL);
  });

  test(`${name}: reset() expects a 100 again; EOF after the 100 is MRI's EOFError`, () => {
    const p = new api.ResponseParser({ expectContinue: true, skipInterim: true });
    for (let round = 0; round < 3; round++) {
      const types = p.feed(enc(INPUTS['continued, no fields'])).map((e) => e.type);
      assert.deepEqual(types, ['continue', 'head', 'body', 'end']);
      p.reset();
    }
    p.close();
    const q = new api.ResponseParser({ expectContinue: true });
    assert.deepEqual(q.feed(enc(CONT)).map((e) => e.type), ['continue']);
    assert.throws(() => q.finish(), (e) => e.rubyClass === 'EOFError' && e.message === 'end of file reached');
    q.close();
  });

  test(`${name}: every split of the input gives the same events`, () => {
    for (const [label, text] of Object.entries(INPUTS)) {
      const bytes = enc(text);
      for (const skipInterim of [true, false]) {
        const opts = { expectContinue: true, skipInterim };
        const whole = feedAll(api, bytes, [], opts);
        const splits = [Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)];
        for (let i = 1; i < bytes.length; i++) splits.push([i]);
        for (const cuts of splits) assert.deepEqual(feedAll(api, bytes, cuts, opts), whole, `${label}, cut at ${cuts.length > 1 ? 'every byte' : cuts[0]}`);
      }
    }
  });
}
