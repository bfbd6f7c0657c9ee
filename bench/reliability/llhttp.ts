// Node's own HTTP/1.1 parser (llhttp), driven exactly as node:http's server drives it: the
// binding behind `_http_common`, initialized as a request parser with Node's default header
// size limit and no lenient flags. It is the reference the webhook's reader is compared with.

/* eslint-disable @typescript-eslint/no-require-imports */

interface ParserBinding {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(buf: Buffer): number | Error;
  [key: number]: unknown;
}
interface HttpCommon {
  HTTPParser: {
    new (): ParserBinding;
    REQUEST: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
    kLenientNone: number;
  };
  methods: string[];
}

const common = require('_http_common') as HttpCommon;
const { HTTPParser, methods } = common;

export interface LlhttpRequest {
  method: string;
  target: string;
  /** Raw [name, value] pairs in order, as llhttp delivers them. */
  rawHeaders: string[];
  body: Buffer;
  keepAlive: boolean;
  upgrade: boolean;
}

export interface LlhttpResult {
  requests: LlhttpRequest[];
  /** How parsing ended: an error code, an upgrade (Node hands the socket over or destroys it), or waiting for more. */
  end: { type: 'error'; code: string; reason: string } | { type: 'upgrade' } | { type: 'more' };
}

export class Llhttp {
  private readonly parser = new HTTPParser();
  private requests: LlhttpRequest[] = [];
  private current: LlhttpRequest | undefined;
  private pendingHeaders: string[] = [];
  private pendingUrl = '';
  private bodyChunks: Buffer[] = [];

  constructor() {
    const p = this.parser;
    p[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      this.pendingHeaders.push(...headers);
      this.pendingUrl += url;
    };
    p[HTTPParser.kOnHeadersComplete] = (
      _major: number,
      _minor: number,
      headers: string[] | undefined,
      method: number,
      url: string | undefined,
      _status: unknown,
      _message: unknown,
      upgrade: boolean,
      keepAlive: boolean,
    ) => {
      const raw = headers ?? this.pendingHeaders;
      this.current = {
        method: methods[method] ?? `#${method}`,
        target: url || this.pendingUrl,
        rawHeaders: headers ? [...this.pendingHeaders, ...raw] : raw,
        body: Buffer.alloc(0),
        keepAlive,
        upgrade,
      };
      this.pendingHeaders = [];
      this.pendingUrl = '';
      return 0;
    };
    p[HTTPParser.kOnBody] = (chunk: Buffer) => {
      this.bodyChunks.push(Buffer.from(chunk));
    };
    p[HTTPParser.kOnMessageComplete] = () => {
      if (!this.current) return;
      this.current.body = Buffer.concat(this.bodyChunks);
      this.bodyChunks = [];
      this.requests.push(this.current);
      this.current = undefined;
    };
  }

  /** Parses the chunks as one connection's bytes. */
  parse(chunks: readonly Buffer[]): LlhttpResult {
    this.parser.initialize(HTTPParser.REQUEST, {}, 0, HTTPParser.kLenientNone);
    this.requests = [];
    this.current = undefined;
    this.pendingHeaders = [];
    this.pendingUrl = '';
    this.bodyChunks = [];
    for (const chunk of chunks) {
      const ret = this.parser.execute(chunk);
      // Not `instanceof Error`: under jest the binding's Error comes from another realm.
      if (typeof ret !== 'number') {
        const e = ret as Error & { code?: string; reason?: string };
        return {
          requests: this.requests,
          end: { type: 'error', code: e.code ?? 'unknown', reason: e.reason ?? e.message },
        };
      }
      // Node's server stops parsing at an upgrade (or CONNECT) and hands the socket over.
      if ((this.current as LlhttpRequest | undefined)?.upgrade || this.requests.some((r) => r.upgrade))
        return { requests: this.requests, end: { type: 'upgrade' } };
    }
    return { requests: this.requests, end: { type: 'more' } };
  }
}
