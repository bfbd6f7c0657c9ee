import {
  formatResponse,
  HttpProtocolError,
  HttpRequest,
  isProtocolError,
  MAX_HEADER_BYTES,
  MAX_HEADER_LINES,
  RequestReader,
} from '../../../src/webhook/http1';

const LIMIT = 1024;

function request(body = '{"a":1}', extra = ''): string {
  return `POST /validate HTTP/1.1\r\nHost: istiod.istio-system.svc:443\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

/** Feeds `chunks` and collects everything the reader yields. */
function read(...chunks: (string | Buffer)[]): (HttpRequest | HttpProtocolError)[] {
  const reader = new RequestReader(LIMIT);
  const out: (HttpRequest | HttpProtocolError)[] = [];
  for (const c of chunks) {
    reader.push(Buffer.isBuffer(c) ? c : Buffer.from(c, 'latin1'));
    for (let r = reader.next(); r !== undefined; r = reader.next()) out.push(r);
  }
  return out;
}

function only(...chunks: (string | Buffer)[]): HttpRequest {
  const out = read(...chunks);
  expect(out).toHaveLength(1);
  if (isProtocolError(out[0]!)) throw new Error(`refused: ${out[0].status} ${out[0].message}`);
  return out[0]!;
}

function refusal(...chunks: (string | Buffer)[]): HttpProtocolError {
  const out = read(...chunks);
  expect(out).toHaveLength(1);
  if (!isProtocolError(out[0]!)) throw new Error('request was accepted');
  return out[0];
}

describe('HTTP/1.1 request reader', () => {
  test('a complete request yields its method, target, headers and body', () => {
    const r = only(request('{"kind":"AdmissionReview"}'));
    expect(r).toMatchObject({ method: 'POST', target: '/validate', keepAlive: true });
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.toString()).toBe('{"kind":"AdmissionReview"}');
  });

  test('a request arriving one byte at a time is the same request', () => {
    const text = request('{"x":"y"}');
    const r = only(...Array.from(Buffer.from(text), (byte) => Buffer.of(byte)));
    expect(r.body.toString()).toBe('{"x":"y"}');
  });

  test('pipelined requests in one chunk come out in order, and a partial third waits', () => {
    const third = request('{"n":3}');
    const out = read(request('{"n":1}') + request('{"n":2}') + third.slice(0, 20));
    expect(out.map((r) => (isProtocolError(r) ? r.status : r.body.toString()))).toEqual(['{"n":1}', '{"n":2}']);
  });

  test('a GET without a body needs no Content-Length', () => {
    expect(only('GET /ready HTTP/1.1\r\nHost: x\r\n\r\n')).toMatchObject({
      method: 'GET',
      target: '/ready',
      body: Buffer.alloc(0),
    });
  });

  test('empty lines before the request line are ignored', () => {
    expect(only(`\r\n\r\n${request()}`).target).toBe('/validate');
  });

  test.each([
    ['HTTP/1.1', '', true],
    ['HTTP/1.1 with Connection: close', 'Connection: close\r\n', false],
    ['HTTP/1.1 with Connection: keep-alive, Close', 'Connection: keep-alive, Close\r\n', false],
    [
      'HTTP/1.1 with Connection: NBSP close (not the close token, as llhttp reads it)',
      'Connection: \u00a0close\r\n',
      true,
    ],
  ])('%s keeps the connection: %s', (_name, extra, keepAlive) => {
    expect(only(request('{}', extra)).keepAlive).toBe(keepAlive);
  });

  test('HTTP/1.0 closes unless it asks for keep-alive', () => {
    expect(only('GET /ready HTTP/1.0\r\n\r\n').keepAlive).toBe(false);
    expect(only('GET /ready HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n').keepAlive).toBe(true);
  });

  test('repeated headers are joined', () => {
    const r = only(request('{}', 'X-A: 1\r\nX-A: 2\r\n'));
    expect(r.headers.get('x-a')).toBe('1, 2');
  });

  test('only spaces and tabs around a value are trimmed', () => {
    const r = only(request('{}', 'X-A: \t1\xa0 \r\n'));
    expect(r.headers.get('x-a')).toBe('1\xa0');
  });

  test.each([
    ['a malformed request line', 'POST /validate\r\n\r\n', 400, 'malformed request line'],
    ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400, 'malformed request line'],
    ['obsolete line folding', 'GET / HTTP/1.1\r\nX-A: 1\r\n  continued\r\n\r\n', 400, 'obsolete line folding'],
    ['a bare LF', 'GET / HTTP/1.1\r\nX-A: 1\nX-B: 2\r\n\r\n', 400, 'bare CR or LF'],
    ['a bare CR', 'GET / HTTP/1.1\r\nX-A: 1\rX-B: 2\r\n\r\n', 400, 'bare CR or LF'],
    ['a NUL byte', 'GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n', 400, 'NUL'],
    [
      'a header name with a space before the colon',
      'GET / HTTP/1.1\r\nX-A : 1\r\n\r\n',
      400,
      'malformed header line 1',
    ],
    ['a header line without a colon', 'GET / HTTP/1.1\r\nnonsense\r\n\r\n', 400, 'malformed header line 1'],
    [
      'chunked transfer encoding',
      'POST /validate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      411,
      'Transfer-Encoding is not accepted',
    ],
    [
      'Content-Length and Transfer-Encoding together',
      'POST /validate HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n',
      411,
      'Content-Length',
    ],
    [
      'conflicting Content-Lengths',
      'POST /validate HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      400,
      'more than one Content-Length',
    ],
    // llhttp refuses identical repeats too; the reader accepts nothing llhttp refuses.
    [
      'an identical repeated Content-Length',
      'POST /validate HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}',
      400,
      'more than one Content-Length',
    ],
    [
      'a control character in a header value',
      'GET / HTTP/1.1\r\nUser-Agent:\x0bkube\r\n\r\n',
      400,
      'control character',
    ],
    ['a method llhttp does not know', 'FOO / HTTP/1.1\r\n\r\n', 501, 'not implemented'],
    ['a CONNECT', 'CONNECT istiod:443 HTTP/1.1\r\n\r\n', 400, 'malformed request line'],
    ['an absolute-form target', 'POST http://istiod/validate HTTP/1.1\r\n\r\n', 400, 'malformed request line'],
    [
      'an upgrade',
      'GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      400,
      'upgrades are not accepted',
    ],
    [
      'a negative Content-Length',
      'POST /validate HTTP/1.1\r\nContent-Length: -1\r\n\r\n',
      400,
      'invalid Content-Length "-1"',
    ],
    [
      'a Content-Length with a sign',
      'POST /validate HTTP/1.1\r\nContent-Length: +2\r\n\r\n{}',
      400,
      'invalid Content-Length',
    ],
    [
      'a Content-Length list',
      'POST /validate HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\n{}',
      400,
      'invalid Content-Length',
    ],
    [
      'a tab inside or after the Connection value',
      'POST /validate HTTP/1.1\r\nConnection: close\t\r\nContent-Length: 2\r\n\r\n{}',
      400,
      'a tab inside the Connection value',
    ],
    [
      'a tab after the Content-Length digits (llhttp refuses it)',
      'POST /validate HTTP/1.1\r\nContent-Length: 2\t\r\n\r\n{}',
      400,
      'a tab after the digits',
    ],
  ])('%s is refused', (_name, text, status, message) => {
    const e = refusal(text);
    expect(e.status).toBe(status);
    expect(e.message).toContain(message);
  });

  test(`a head over ${MAX_HEADER_BYTES} bytes is 431, even before it ends`, () => {
    const big = `GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES)}`;
    expect(refusal(big).status).toBe(431);
    expect(refusal(`${big}\r\n\r\n`).message).toBe(`request headers are larger than ${MAX_HEADER_BYTES} bytes`);
  });

  test(`a head of exactly ${MAX_HEADER_BYTES} bytes is accepted`, () => {
    const start = 'GET / HTTP/1.1\r\nX-Fill: ';
    expect(only(`${start}${'a'.repeat(MAX_HEADER_BYTES - start.length)}\r\n\r\n`).target).toBe('/');
  });

  test(`more than ${MAX_HEADER_LINES} header lines is 431; exactly that many is fine`, () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `X-${i}: v\r\n`).join('');
    expect(only(`GET / HTTP/1.1\r\n${lines(MAX_HEADER_LINES)}\r\n`).headers.size).toBe(MAX_HEADER_LINES);
    expect(refusal(`GET / HTTP/1.1\r\n${lines(MAX_HEADER_LINES + 1)}\r\n`)).toEqual({
      status: 431,
      message: `more than ${MAX_HEADER_LINES} header lines`,
    });
  });

  test('a body over the limit is refused from its Content-Length, before any of it arrives', () => {
    const e = refusal(`POST /validate HTTP/1.1\r\nContent-Length: ${LIMIT + 1}\r\n\r\n`);
    expect(e).toMatchObject({ status: 400, tooLarge: true });
    expect(only(`POST /validate HTTP/1.1\r\nContent-Length: ${LIMIT}\r\n\r\n${'x'.repeat(LIMIT)}`).body.length).toBe(
      LIMIT,
    );
  });

  test('after a refusal the reader yields nothing more', () => {
    const reader = new RequestReader(LIMIT);
    reader.push(Buffer.from('BAD\r\n\r\n'));
    expect(reader.next()).toMatchObject({ status: 400 });
    reader.push(Buffer.from(request()));
    expect(reader.next()).toBeUndefined();
  });

  test('idle is true only between requests', () => {
    const reader = new RequestReader(LIMIT);
    expect(reader.idle).toBe(true);
    const text = request();
    reader.push(Buffer.from(text.slice(0, 10)));
    expect(reader.next()).toBeUndefined();
    expect(reader.idle).toBe(false);
    reader.push(Buffer.from(text.slice(10)));
    expect(reader.next()).toMatchObject({ target: '/validate' });
    expect(reader.idle).toBe(true);
  });

  test('fuzzing: mutated and truncated requests never throw and never yield a body longer than the limit', () => {
    let seed = 42;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    const base = Buffer.from(request('{"apiVersion":"admission.k8s.io/v1"}') + request('{}'), 'latin1');
    const alphabet = Buffer.from('\r\n:, \t\0aZ09-/HTTP1.', 'latin1');
    for (let i = 0; i < 3000; i++) {
      const bytes = Buffer.from(base);
      for (let m = rand(6); m >= 0; m--)
        bytes[rand(bytes.length)] = rand(3) === 0 ? rand(256) : alphabet[rand(alphabet.length)]!;
      const cut = bytes.subarray(0, rand(bytes.length + 1));
      const reader = new RequestReader(LIMIT);
      // Split at a random point so both single- and two-chunk paths are exercised.
      const at = rand(cut.length + 1);
      for (const part of [cut.subarray(0, at), cut.subarray(at)]) {
        reader.push(part);
        for (let r = reader.next(); r !== undefined; r = reader.next()) {
          if (isProtocolError(r)) expect([400, 411, 431, 501]).toContain(r.status);
          else expect(r.body.length).toBeLessThanOrEqual(LIMIT);
        }
      }
    }
  });
});

describe('response formatting', () => {
  test('status line, Content-Length in bytes, Date, and Connection: close only when closing', () => {
    const keep = formatResponse(200, 'application/json', '{"é":1}', {
      close: false,
      date: 'Wed, 02 Dec 2026 15:00:00 GMT',
    }).toString('utf8');
    expect(keep).toBe(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\nDate: Wed, 02 Dec 2026 15:00:00 GMT\r\n\r\n{"é":1}',
    );
    const close = formatResponse(411, 'text/plain; charset=utf-8', 'x\n', { close: true, date: 'd' }).toString('utf8');
    expect(close).toBe(
      'HTTP/1.1 411 Length Required\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nDate: d\r\nConnection: close\r\n\r\nx\n',
    );
  });
});
