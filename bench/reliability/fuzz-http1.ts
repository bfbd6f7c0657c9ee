// The webhook's HTTP/1.1 reader (src/webhook/http1.ts) against Node's llhttp on the same bytes.
// Requests as the API server sends them are mutated structurally (request line, header lines,
// separators, line endings, Content-Length, bodies, pipelining) and fed in random pieces to both.
// The rule: every request the reader accepts, llhttp accepts too, with the same method, target,
// headers (lower-cased names, repeats joined with ", "), body and keep-alive; so every request
// llhttp refuses is refused. The reader may refuse more (it is stricter by design); those cases
// are counted by reason in the tally.

import { MAX_REQUEST_BODY_BYTES } from '../../src/webhook/admission';
import { HttpRequest, isProtocolError, RequestReader } from '../../src/webhook/http1';
import { Llhttp, LlhttpRequest } from './llhttp';
import { boundaryStrings } from './mutate-json';
import type { Rng } from './prng';
import { CaseRecord, count, escapeBytes, FuzzFailure, FuzzTarget, Verdict } from './target';

interface Header {
  name: string;
  /** Between the name and the value: ":" or ": " or anything a mutation puts there. */
  sep: string;
  value: string;
  /** Line ending after this header line. */
  eol: string;
}

interface RequestModel {
  leading: string;
  method: string;
  target: string;
  version: string;
  /** Separators of the request line (single spaces when valid). */
  sp1: string;
  sp2: string;
  lineEol: string;
  headers: Header[];
  headEnd: string;
  body: Buffer;
}

const REVIEW_BODY =
  '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","operation":"CREATE","object":{}}}';

function apiServerRequest(rng: Rng): RequestModel {
  const body = Buffer.from(rng.chance(0.8) ? REVIEW_BODY : rng.chance(0.5) ? '' : 'x'.repeat(rng.size(3000)));
  const h = (name: string, value: string): Header => ({ name, sep: ': ', value, eol: '\r\n' });
  const headers = [
    h('Host', 'istiod.istio-system.svc:443'),
    h('User-Agent', 'kube-apiserver-admission'),
    h('Content-Length', String(body.length)),
    h('Accept', 'application/json, */*'),
    h('Content-Type', 'application/json'),
    h('Accept-Encoding', 'gzip'),
  ];
  if (rng.chance(0.2)) headers.push(h('Connection', rng.pick(['close', 'keep-alive', 'Keep-Alive, foo'])));
  return {
    leading: '',
    method: rng.chance(0.9) ? 'POST' : 'GET',
    target: rng.pick(['/validate?timeout=10s', '/validate', '/ready', '/validate/']),
    version: rng.chance(0.95) ? 'HTTP/1.1' : 'HTTP/1.0',
    sp1: ' ',
    sp2: ' ',
    lineEol: '\r\n',
    headers,
    headEnd: '\r\n',
    body,
  };
}

const ODD_CHARS = [
  '\t',
  ' ',
  '\x00',
  '\x01',
  '\x0b',
  '\x0c',
  '\x7f',
  '\x80',
  '\xa0',
  '\xff',
  '"',
  '(',
  '@',
  '{',
  ':',
  ';',
  ',',
  '\r',
  '\n',
  '\r\n',
  '\r\n ',
];
const EOLS = ['\r\n', '\n', '\r', '\r\r\n', '\n\r', ' \r\n'];
const HEADER_NAMES = [
  'Content-Length',
  'Transfer-Encoding',
  'Connection',
  'Upgrade',
  'Host',
  'Expect',
  'Content-Type',
  'X-Forwarded-For',
  'Trailer',
  'TE',
  'Content-length',
  'content-length ',
];
const CONTENT_LENGTHS = [
  '0',
  '00',
  '+1',
  '-1',
  ' 1',
  '1 ',
  '1,1',
  '0x10',
  '1e2',
  '18446744073709551616',
  '999999999999999',
  '9999999999999999',
  '',
  'abc',
];

const oddChar = (rng: Rng) => rng.pick(ODD_CHARS);
const insertAt = (s: string, text: string, at: number) => s.slice(0, at) + text + s.slice(at);

function mutateModel(rng: Rng, m: RequestModel): void {
  const hi = () => rng.int(m.headers.length);
  switch (rng.int(20)) {
    case 0:
      if (m.headers.length > 0) m.headers.splice(hi(), 1);
      break;
    case 1:
      if (m.headers.length > 0) {
        const i = hi();
        m.headers.splice(i, 0, { ...m.headers[i]! });
      }
      break;
    case 2:
      if (m.headers.length > 1) {
        const i = hi(),
          j = hi();
        [m.headers[i], m.headers[j]] = [m.headers[j]!, m.headers[i]!];
      }
      break;
    case 3:
      if (m.headers.length > 0) {
        const x = m.headers[hi()]!;
        x.name = rng.chance(0.5) ? x.name.toUpperCase() : insertAt(x.name, oddChar(rng), rng.int(x.name.length + 1));
      }
      break;
    case 4:
      if (m.headers.length > 0) {
        const x = m.headers[hi()]!;
        x.value = insertAt(x.value, oddChar(rng), rng.int(x.value.length + 1));
      }
      break;
    case 5:
      if (m.headers.length > 0) m.headers[hi()]!.sep = rng.pick([':', ' :', ':\t', ': \t ', '::', '', ' : ', ':\x0b']);
      break;
    case 6:
      if (m.headers.length > 0) m.headers[hi()]!.eol = rng.pick(EOLS);
      else m.lineEol = rng.pick(EOLS);
      break;
    case 7:
      m.headers.splice(rng.int(m.headers.length + 1), 0, {
        name: rng.pick(HEADER_NAMES),
        sep: ': ',
        value: rng.pick([
          'chunked',
          'gzip, chunked',
          'identity',
          'upgrade',
          'close',
          'keep-alive',
          'h2c',
          '100-continue',
          String(m.body.length),
          boundaryStrings(rng),
        ]),
        eol: '\r\n',
      });
      break;
    case 8: {
      const cl = m.headers.find((x) => x.name.toLowerCase() === 'content-length');
      if (cl) cl.value = rng.pick(CONTENT_LENGTHS);
      else m.headers.push({ name: 'Content-Length', sep: ': ', value: rng.pick(CONTENT_LENGTHS), eol: '\r\n' });
      break;
    }
    case 9:
      m.headers.push({
        name: 'Content-Length',
        sep: ': ',
        value: String(m.body.length + rng.pick([0, 0, 1, -1, 5])),
        eol: '\r\n',
      });
      break;
    case 10:
      m.method = rng.pick([
        'get',
        'PUT',
        'CONNECT',
        'OPTIONS',
        'PRI',
        'SEARCH',
        'QUERY',
        'FOO',
        'P\x00ST',
        'POST ',
        '',
        'M'.repeat(rng.size(200)),
        'PROPFIND',
        'M-SEARCH',
        'LINK',
        'ACL',
      ]);
      break;
    case 11:
      m.target = rng.pick([
        '*',
        'http://istiod/validate',
        'istiod:443',
        '/a b',
        '/\x7f',
        '/é',
        '/\x80',
        '',
        '//',
        '/?',
        '/#f',
        '/' + 'a'.repeat(rng.scale([10, 1000, 8000], [16384, 20000])),
        insertAt(m.target, oddChar(rng), rng.int(m.target.length + 1)),
      ]);
      break;
    case 12:
      m.version = rng.pick([
        'HTTP/1.2',
        'HTTP/2.0',
        'HTTP/1.',
        'HTTP/1.10',
        'http/1.1',
        'HTTP/0.9',
        'HTTP/1.1 ',
        'HTTP/11',
        'HTTP/3.0',
        'HTTP/1.0',
      ]);
      break;
    case 13:
      if (rng.chance(0.5)) m.sp1 = rng.pick(['  ', '\t', '', ' \t']);
      else m.sp2 = rng.pick(['  ', '\t', '', ' \t']);
      break;
    case 14:
      m.leading = rng.pick(['\r\n', '\r\n\r\n', '\n', ' ', '\r\n'.repeat(rng.size(50))]);
      break;
    case 15: {
      // obsolete line folding
      if (m.headers.length > 0) {
        const x = m.headers[hi()]!;
        x.value += rng.pick(['\r\n continued', '\r\n\tcontinued', '\n continued']);
      }
      break;
    }
    case 16:
      m.headEnd = rng.pick(['\n', '\r', '\r\r\n', ' \r\n', '\r\n\r\n']);
      break;
    case 17: {
      // a chunked body
      m.headers.push({ name: 'Transfer-Encoding', sep: ': ', value: 'chunked', eol: '\r\n' });
      m.body = Buffer.from(`${m.body.length.toString(16)}\r\n${m.body.toString('latin1')}\r\n0\r\n\r\n`, 'latin1');
      if (rng.chance(0.5)) m.headers = m.headers.filter((x) => x.name !== 'Content-Length');
      break;
    }
    case 18: {
      // many or large headers, around the 16 KiB and 100-line limits
      const n = rng.pick([30, 33, 99, 100, 101, 200]);
      const width = rng.pick([1, 100, 160, 16300]);
      for (let i = 0; i < n && m.headers.length < 400; i++)
        m.headers.push({
          name: `X-H${i}`,
          sep: ': ',
          value: 'v'.repeat(Math.max(1, Math.floor(width / n))),
          eol: '\r\n',
        });
      if (rng.chance(0.3))
        m.headers.push({ name: 'X-Big', sep: ': ', value: 'b'.repeat(16384 - 200 + rng.int(400)), eol: '\r\n' });
      break;
    }
    default: // body longer or shorter than declared
      m.body = rng.chance(0.5)
        ? Buffer.concat([m.body, Buffer.from(boundaryStrings(rng), 'latin1')])
        : m.body.subarray(0, rng.int(m.body.length + 1));
  }
}

function render(m: RequestModel): Buffer {
  let head = `${m.leading}${m.method}${m.sp1}${m.target}${m.sp2}${m.version}${m.lineEol}`;
  for (const h of m.headers) head += `${h.name}${h.sep}${h.value}${h.eol}`;
  head += m.headEnd;
  return Buffer.concat([Buffer.from(head, 'latin1'), m.body]);
}

function generate(rng: Rng): Buffer {
  const parts: Buffer[] = [];
  const n = rng.chance(0.8) ? 1 : 2 + rng.int(2);
  for (let i = 0; i < n; i++) {
    const m = apiServerRequest(rng);
    const mutations = rng.chance(0.05) ? 0 : 1 + rng.int(3);
    for (let j = 0; j < mutations; j++) mutateModel(rng, m);
    parts.push(render(m));
  }
  let bytes = Buffer.concat(parts);
  if (rng.chance(0.1)) {
    // raw byte noise after the structural mutations
    bytes = Buffer.from(bytes);
    for (let k = 1 + rng.int(3); k > 0 && bytes.length > 0; k--) bytes[rng.int(bytes.length)] = rng.int(256);
  }
  if (rng.chance(0.05)) bytes = bytes.subarray(0, rng.int(bytes.length + 1));
  return bytes;
}

/** The bytes as a connection might deliver them: whole, or in random pieces. */
function split(rng: Rng, bytes: Buffer): Buffer[] {
  if (rng.chance(0.5) || bytes.length < 2) return [bytes];
  const chunks: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const n = 1 + rng.int(rng.chance(0.3) ? 8 : 512);
    chunks.push(bytes.subarray(at, at + n));
    at += n;
  }
  return chunks;
}

/** llhttp's raw header list in the reader's shape: lower-cased names, repeats joined with ", ". */
function headerMap(raw: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!.toLowerCase();
    const prior = out.get(key);
    out.set(key, prior === undefined ? raw[i + 1]! : `${prior}, ${raw[i + 1]!}`);
  }
  return out;
}

function differences(ours: HttpRequest, ref: LlhttpRequest): string[] {
  const diff: string[] = [];
  if (ref.upgrade) diff.push('llhttp treats it as an upgrade (Node hands the socket over or closes it)');
  // llhttp knows a few methods Node's table does not name (QUERY); Node cannot serve those at all.
  if (ours.method !== ref.method && !ref.method.startsWith('#'))
    diff.push(`method ${JSON.stringify(ours.method)} vs ${JSON.stringify(ref.method)}`);
  if (ours.target !== ref.target) diff.push(`target ${JSON.stringify(ours.target)} vs ${JSON.stringify(ref.target)}`);
  const theirs = headerMap(ref.rawHeaders);
  const names = new Set([...ours.headers.keys(), ...theirs.keys()]);
  for (const name of names) {
    const a = ours.headers.get(name);
    const b = theirs.get(name);
    if (a !== b) diff.push(`header ${JSON.stringify(name)}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  if (!ours.body.equals(ref.body)) diff.push(`body of ${ours.body.length} vs ${ref.body.length} bytes`);
  if (ours.keepAlive !== ref.keepAlive) diff.push(`keep-alive ${ours.keepAlive} vs ${ref.keepAlive}`);
  return diff;
}

export function http1Target(): FuzzTarget {
  const llhttp = new Llhttp();
  const tally = new Map<string, number>();
  return {
    name: 'http1',
    describe: "src/webhook/http1.ts RequestReader vs Node's llhttp on the same bytes (fed whole or in random pieces)",
    tally,
    run(rng: Rng, record: CaseRecord): Verdict {
      const bytes = generate(rng);
      record.input = escapeBytes(bytes);
      const chunks = split(rng, bytes);
      const reader = new RequestReader(MAX_REQUEST_BODY_BYTES);
      const accepted: HttpRequest[] = [];
      let refusal: string | undefined;
      outer: for (const chunk of chunks) {
        reader.push(chunk);
        for (;;) {
          const next = reader.next();
          if (next === undefined) break;
          if (isProtocolError(next)) {
            refusal = `${next.status} ${next.message.replace(/\d+/g, 'N')}`;
            break outer;
          }
          accepted.push(next);
          // The server answers and closes after a request that does not keep the connection alive.
          if (!next.keepAlive) break outer;
        }
      }
      const ref = llhttp.parse(chunks);
      for (let i = 0; i < accepted.length; i++) {
        const theirs = ref.requests[i];
        if (!theirs) {
          const why =
            ref.end.type === 'error'
              ? `${ref.end.code} (${ref.end.reason})`
              : ref.end.type === 'upgrade'
                ? 'an upgrade'
                : 'an incomplete request';
          throw new FuzzFailure(
            `http1.ts accepted request #${i + 1} (${accepted[i]!.method} ${accepted[i]!.target}) where llhttp saw ${why}`,
          );
        }
        const diff = differences(accepted[i]!, theirs);
        if (diff.length > 0)
          throw new FuzzFailure(`request #${i + 1} differs from llhttp's reading: ${diff.join('; ')}`);
      }
      if (refusal && ref.requests.length > accepted.length) count(tally, `stricter than llhttp: ${refusal}`);
      return accepted.length > 0 ? 'accepted' : 'refused';
    },
  };
}
