// A small JSON REST client over node:http(s), configured from a KubeConfig (server, TLS, token).
// Raw JSON in and out: the store keeps objects exactly as the API server sends them, without the
// generated clients' model classes (which turn timestamps into Dates).

import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** Default bound on any one request (a watch is not a request here). */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Largest response body read (a list page of 500 fat objects stays well below). */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  /** Cancels the request (the caller that wanted the answer went away). */
  signal?: AbortSignal;
}

export interface KubeResponse {
  status: number;
  body: unknown;
  headers: http.IncomingHttpHeaders;
}

/** An API error answer: status code and the Status object's reason and message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  /** client-node's informer restarts with a re-list when an error has statusCode 410. */
  get statusCode(): number {
    return this.status;
  }
}

export function apiErrorOf(res: KubeResponse, what: string): KubeApiError {
  const status = res.body as { reason?: string; message?: string } | undefined;
  const retry = Number(res.headers['retry-after']);
  return new KubeApiError(
    res.status,
    status?.reason ?? '',
    `${what}: HTTP ${res.status}${status?.message ? `: ${status.message}` : ''}`,
    Number.isFinite(retry) ? retry : undefined,
  );
}

export interface ResourcePath {
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function resourcePath(p: ResourcePath): string {
  const base = p.group === '' ? `/api/${p.version}` : `/apis/${p.group}/${p.version}`;
  const ns = p.namespace !== undefined ? `/namespaces/${encodeURIComponent(p.namespace)}` : '';
  const name = p.name !== undefined ? `/${encodeURIComponent(p.name)}` : '';
  const sub = p.subresource !== undefined ? `/${p.subresource}` : '';
  return `${base}${ns}/${p.plural}${name}${sub}`;
}

export class KubeClient {
  readonly server: string;

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly userAgent = 'istiod-ts',
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
  }

  async request(req: KubeRequest): Promise<KubeResponse> {
    const url = new URL(this.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const options: https.RequestOptions = { method: req.method, headers: {} };
    // Re-applied per request: in-cluster tokens are rotated on disk and re-read here.
    await this.kubeConfig.applyToHTTPSOptions(options);
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    options.headers = {
      ...(options.headers as Record<string, string>),
      Accept: 'application/json',
      'User-Agent': this.userAgent,
      ...(body !== undefined
        ? { 'Content-Type': req.contentType ?? 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }
        : {}),
    };
    const timeoutMs = req.timeoutMs ?? REQUEST_TIMEOUT_MS;
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<KubeResponse>((resolve, reject) => {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
      const r = transport.request(url, { ...options, signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES)
            res.destroy(new Error(`${req.method} ${req.path}: response larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text !== '') {
            try {
              parsed = JSON.parse(text);
            } catch (err) {
              reject(new Error(`${req.method} ${req.path}: invalid JSON in the response: ${(err as Error).message}`));
              return;
            }
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      });
      r.on('error', (err) => {
        if (req.signal?.aborted) reject(new Error(`${req.method} ${req.path}: cancelled by the caller`));
        else
          reject(
            err.name === 'AbortError' || err.name === 'TimeoutError'
              ? new Error(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`)
              : err,
          );
      });
      r.end(body);
    });
  }

  /** Like request, but an HTTP error status becomes a KubeApiError. */
  async call<T>(req: KubeRequest): Promise<T> {
    const res = await this.request(req);
    if (res.status >= 400) throw apiErrorOf(res, `${req.method} ${req.path}`);
    return res.body as T;
  }
}
