// A strict HTTP/1.1 request reader for the webhook listener, as a pure state machine over bytes.
//
// The webhook's only real caller is the Kubernetes API server, which since 1.16 sends admission
// reviews over HTTP/1.1 keep-alive with a Content-Length body. Node's http server wraps every
// request and response in streams, event emitters and timers; on the webhook's path that cost
// more of the event loop per review than TLS and the validators together.
// This reader accepts exactly the shape of request a webhook needs and refuses anything else
// with the status RFC 9112 gives it, so the connection is closed rather than guessed at:
// no obsolete line folding, no bare CR or LF, no Transfer-Encoding, one Content-Length.

/** Largest request head (request line and headers) accepted, as Node's own default. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Most header lines accepted in one request. */
export const MAX_HEADER_LINES = 100;
/** Longest Content-Length value read; anything longer is over every body limit anyway. */
const MAX_CONTENT_LENGTH_DIGITS = 15;

export interface HttpRequest {
  method: string;
  target: string;
  /** Lower-cased names; a repeated header keeps its values joined with ", ". */
  headers: Map<string, string>;
  body: Buffer;
  /** False when the client asked to close: `Connection: close`, or HTTP/1.0 without keep-alive. */
  keepAlive: boolean;
}

/** A request the reader refuses; the connection must close after the answer. */
export interface HttpProtocolError {
  status: number;
  message: string;
  /** The body is over the limit (answered by the admission layer's own message). */
  tooLarge?: boolean;
}

interface Head {
  method: string;
  target: string;
  headers: Map<string, string>;
  keepAlive: boolean;
  /** Bytes of the head including its final empty line. */
  length: number;
  bodyLength: number;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Origin-form targets only ("/validate?timeout=10s"): the API server sends nothing else, and
// llhttp refuses many absolute- and authority-form spellings.
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[\x21-\x7e]*) HTTP\/1\.([01])$/;
// Control characters other than HTAB, and DEL, in a header value (llhttp refuses them too): anything
// but what RFC 9110 allows there, HTAB, SP, visible ASCII and obs-text (the head is read as latin1).
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * `text` without the spaces and tabs at its ends: only SP and HTAB are whitespace around a value
 * (RFC 9110 OWS); String.trim would also take \v, \f and NBSP.
 */
function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text.charCodeAt(start) === 0x20 || text.charCodeAt(start) === 0x09)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
/** Methods served; others are 501 (RFC 9110 §9.1), as llhttp refuses names it does not know. */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
// A CR not followed by LF, an LF not preceded by CR, or a NUL anywhere in the head.
const BAD_LINE_BREAK = /\r(?!\n)|(?<!\r)\n|\0/;

const fail = (status: number, message: string): HttpProtocolError => ({ status, message });

export function isProtocolError(r: HttpRequest | HttpProtocolError): r is HttpProtocolError {
  return 'status' in r;
}

export class RequestReader {
  /** Contiguous bytes of the head being read, or of a request whose body is complete. */
  private buf: Buffer = Buffer.alloc(0);
  /** Chunks received after buf, joined only when a head or a whole body is there to read. */
  private parts: Buffer[] = [];
  private partsLength = 0;
  private head: Head | undefined;
  private failed = false;

  constructor(private readonly maxBodyBytes: number) {}

  /** True between requests: nothing of the next one has arrived yet. */
  get idle(): boolean {
    return this.buf.length === 0 && this.partsLength === 0 && this.head === undefined;
  }

  /** True once a request's head is read and its body is still arriving. */
  get receivingBody(): boolean {
    return this.head !== undefined;
  }

  push(chunk: Buffer): void {
    // Joining on every chunk would copy a 6 MiB body ~400 times over (quadratic); chunks wait in
    // a list until the body is complete.
    this.parts.push(chunk);
    this.partsLength += chunk.length;
  }

  private join(): void {
    if (this.parts.length === 0) return;
    const [only] = this.parts;
    this.buf =
      this.buf.length === 0 && this.parts.length === 1 && only ? only : Buffer.concat([this.buf, ...this.parts]);
    this.parts = [];
    this.partsLength = 0;
  }

  /**
   * The next complete request, or the error that ends the connection, or undefined while more
   * bytes are needed. After an error the reader returns nothing more.
   */
  next(): HttpRequest | HttpProtocolError | undefined {
    if (this.failed) return undefined;
    if (!this.head) {
      this.join();
      const head = this.readHead();
      if (head === undefined) return undefined;
      if ('status' in head) {
        this.failed = true;
        this.buf = Buffer.alloc(0);
        return head;
      }
      this.head = head;
    }
    const { head } = this;
    const end = head.length + head.bodyLength;
    if (this.buf.length + this.partsLength < end) return undefined;
    this.join();
    const body = this.buf.subarray(head.length, end);
    this.buf = end === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(end);
    this.head = undefined;
    return { method: head.method, target: head.target, headers: head.headers, body, keepAlive: head.keepAlive };
  }

  private readHead(): Head | HttpProtocolError | undefined {
    // RFC 9112 §2.2: empty lines before a request line are ignored.
    let start = 0;
    while (this.buf.length >= start + 2 && this.buf[start] === 0x0d && this.buf[start + 1] === 0x0a) start += 2;
    const end = this.buf.indexOf(CRLFCRLF, start);
    if (end < 0) {
      return this.buf.length - start > MAX_HEADER_BYTES
        ? fail(431, `request headers are larger than ${MAX_HEADER_BYTES} bytes`)
        : undefined;
    }
    if (end - start > MAX_HEADER_BYTES) return fail(431, `request headers are larger than ${MAX_HEADER_BYTES} bytes`);
    const text = this.buf.toString('latin1', start, end);
    if (BAD_LINE_BREAK.test(text)) return fail(400, 'malformed request: a bare CR or LF, or a NUL byte, in the head');
    // lines[0] is the request line; lines[i] is header line i.
    const lines = text.split('\r\n');
    const requestLine = REQUEST_LINE.exec(lines[0] ?? '');
    if (!requestLine) return fail(400, 'malformed request line: expected "METHOD /path HTTP/1.1"');
    // Every group takes part in a match, so the defaults are never used.
    const [, method = '', target = '', minorVersion] = requestLine;
    if (lines.length - 1 > MAX_HEADER_LINES) return fail(431, `more than ${MAX_HEADER_LINES} header lines`);
    const headers = new Map<string, string>();
    let contentLength: string | undefined;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line[0] === ' ' || line[0] === '\t')
        return fail(400, 'malformed header: obsolete line folding is not accepted');
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!TOKEN.test(name)) return fail(400, `malformed header line ${i}`);
      const key = name.toLowerCase();
      const raw = line.slice(colon + 1);
      if (BAD_VALUE_CHAR.test(raw)) return fail(400, `malformed header line ${i}: a control character in the value`);
      const value = trimOws(raw);
      if (key === 'content-length') {
        // RFC 9112 would allow identical repeats; llhttp refuses any, and so does the reader.
        if (contentLength !== undefined) return fail(400, 'more than one Content-Length header');
        // llhttp takes spaces after the digits but not a tab; the two readers must agree on every
        // length, so a tab there is refused as llhttp refuses it.
        if (raw.replace(/^[ \t]+/, '').includes('\t'))
          return fail(
            400,
            `invalid Content-Length "${value.slice(0, MAX_CONTENT_LENGTH_DIGITS)}": a tab after the digits`,
          );
        contentLength = value;
      }
      // llhttp matches Connection tokens up to a space or comma only, so "close<TAB>" is no close
      // token to it; rather than copy that quirk, a tab inside the value is refused.
      if (key === 'connection' && raw.replace(/^[ \t]+/, '').includes('\t'))
        return fail(400, `malformed header line ${i}: a tab inside the Connection value`);
      const prior = headers.get(key);
      headers.set(key, prior === undefined || key === 'content-length' ? value : `${prior}, ${value}`);
    }
    if (headers.has('transfer-encoding'))
      return fail(411, 'a request body must be sent with Content-Length; Transfer-Encoding is not accepted');
    if (!METHODS.has(method)) return fail(501, `the method ${JSON.stringify(method.slice(0, 20))} is not implemented`);
    // An upgrade leaves HTTP/1.1 (llhttp hands the socket over); a review never asks for one.
    if (headers.has('upgrade')) return fail(400, 'protocol upgrades are not accepted');
    let bodyLength = 0;
    if (contentLength !== undefined) {
      if (!/^\d+$/.test(contentLength) || contentLength.length > MAX_CONTENT_LENGTH_DIGITS)
        return fail(400, `invalid Content-Length "${contentLength}"`);
      bodyLength = Number(contentLength);
      if (bodyLength > this.maxBodyBytes)
        return { status: 400, message: `request body of ${bodyLength} bytes is over the limit`, tooLarge: true };
    }
    const connectionHeader = headers.get('connection');
    // Without a Connection header there is no token: HTTP/1.1 keeps the connection, 1.0 closes it.
    const connection = connectionHeader === undefined ? [] : connectionHeader.toLowerCase().split(',').map(trimOws);
    const keepAlive = minorVersion === '1' ? !connection.includes('close') : connection.includes('keep-alive');
    return { method, target, headers, keepAlive, length: end + 4, bodyLength };
  }
}

const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  400: 'Bad Request',
  404: 'Not Found',
  408: 'Request Timeout',
  411: 'Length Required',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
};

/** One HTTP/1.1 response with a Content-Length body, as bytes ready for the socket. */
export function formatResponse(
  status: number,
  contentType: string,
  body: string,
  opts: { close: boolean; date: string },
): Buffer {
  const head =
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Unknown'}\r\n` +
    `Content-Type: ${contentType}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Date: ${opts.date}\r\n` +
    (opts.close ? 'Connection: close\r\n' : '') +
    '\r\n';
  return Buffer.from(head + body, 'utf8');
}
