// A Kubernetes API server double for tests: node:http on a random port speaking the REST wire
// protocol for the resources istiod-ts reads and writes, with hooks for the faults a real cluster
// shows (dropped watches, compaction, restarts, outages, injected errors). Every request is
// recorded as (verb, group, resource, namespace, subresource) so tests can check RBAC needs.

import http, { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiVersions, groupList, resourceList, SERVER_VERSION } from './discovery';
import * as verbs from './handlers';
import { matcherOf, type HandlerContext, type ResourceRequest, type Reply } from './handlers';
import { findResourceByKind, resourceKey, type ServedResource } from './resources';
import { MAX_BODY_BYTES, parseRoute, readBody, send, verbOf } from './routes';
import { ApiError, errors } from './status';
import { Storage, type StoredObject } from './storage';
import type { TokenIdentity } from './tokens';
import { Delays } from './delays';
import { WatchHub } from './watch';

export interface RecordedRequest {
  verb: string;
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** A create's object name, from its body (the path of a create names no object). */
  createdName?: string;
  dryRun: boolean;
  userAgent: string;
}

/** metadata.name of a JSON body, if it has one; a body that does not parse is refused later. */
function nameInBody(rawBody: string): string | undefined {
  try {
    const name = (JSON.parse(rawBody) as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A refusal of matching requests with an error Status (any code: 403 from RBAC or a webhook, 422,
 * 429, 5xx), before anything is applied. Unset fields match every request.
 */
export interface Fault {
  verb?: string;
  group?: string;
  resource?: string;
  /** Only requests for this subresource (`status`); '' for the main resource only. */
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Only requests whose User-Agent contains this text. */
  userAgent?: string;
  status: number;
  reason?: string;
  message?: string;
  /** How many matching requests fail; default 1. */
  times?: number;
  retryAfterSeconds?: number;
}

export interface TestApiServerOptions {
  port?: number;
  /** How often watches that asked for bookmarks get one. */
  bookmarkIntervalMs?: number;
}

const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;

export class TestApiServer {
  readonly requests: RecordedRequest[] = [];
  readonly storage = new Storage();
  private readonly tokens = new Map<string, TokenIdentity>();
  private readonly watches: WatchHub;
  private readonly faults: Fault[] = [];
  /** Slow or hung answers on demand (see delays.ts). */
  readonly delays = new Delays();
  private readonly uninstalled = new Set<string>();
  private readonly sockets = new Set<Socket>();
  private unreachableUntil = 0;
  private server!: http.Server;
  url = '';

  private constructor(options: TestApiServerOptions) {
    this.watches = new WatchHub(this.storage, options.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS);
  }

  static async start(options: TestApiServerOptions = {}): Promise<TestApiServer> {
    const s = new TestApiServer(options);
    s.server = http.createServer((req, res) => void s.handle(req, res));
    s.server.on('connection', (socket) => {
      if (Date.now() < s.unreachableUntil) {
        socket.destroy();
        return;
      }
      s.sockets.add(socket);
      socket.on('close', () => s.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => s.server.listen(options.port ?? 0, '127.0.0.1', resolve));
    const address = s.server.address() as { port: number };
    s.url = `http://127.0.0.1:${address.port}`;
    return s;
  }

  async close(): Promise<void> {
    this.delays.clear();
    this.watches.dropAll();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- state, without going through HTTP ----

  private resourceOf(apiVersion: string, kind: string): ServedResource {
    const r = findResourceByKind(apiVersion, kind);
    if (!r) throw new Error(`the test API server does not serve ${apiVersion} ${kind}`);
    return r;
  }

  /** Creates or replaces an object as if a user applied it; returns it as stored. */
  put(object: {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; [k: string]: unknown };
    [k: string]: unknown;
  }): StoredObject {
    const r = this.resourceOf(object.apiVersion, object.kind);

    const { apiVersion: _a, kind: _k, ...rest } = structuredClone(object);
    const body = rest;
    const key = resourceKey(r.group, r.plural);
    const existing = this.storage.get(key, body.metadata.namespace, body.metadata.name);
    if (existing) {
      body.metadata = {
        ...body.metadata,
        uid: existing.metadata.uid,
        creationTimestamp: existing.metadata.creationTimestamp,
      };
      return this.storage.write(key, body, 'MODIFIED');
    }
    return this.storage.write(key, this.storage.prepareCreate(body), 'ADDED');
  }

  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const r = this.resourceOf(apiVersion, kind);
    return this.storage.remove(resourceKey(r.group, r.plural), namespace, name);
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const r = this.resourceOf(apiVersion, kind);
    return this.storage.get(resourceKey(r.group, r.plural), namespace, name);
  }

  list(apiVersion: string, kind: string): StoredObject[] {
    const r = this.resourceOf(apiVersion, kind);
    return this.storage.list(resourceKey(r.group, r.plural));
  }

  registerToken(token: string, identity: TokenIdentity): void {
    this.tokens.set(token, identity);
  }

  // ---- faults ----

  /** Cuts every open watch connection. */
  dropWatches(): void {
    this.watches.dropAll();
  }

  /** Ends every watch cleanly, as the server's watch timeout does. */
  endWatches(): void {
    this.watches.endAll();
  }

  sendBookmarks(): void {
    this.watches.bookmarkAll();
  }

  get openWatches(): number {
    return this.watches.count;
  }

  /** Every open watch stays open but sends nothing more (no event, no bookmark, no end at its timeout). */
  stallWatches(): void {
    this.watches.stallAll();
  }

  /** The open watches with the timeoutSeconds each asked for (undefined: none). */
  watchTimeouts(): { resource: string; timeoutSeconds: number | undefined }[] {
    return this.watches.describeOpen();
  }

  /** Forgets the event history: resuming from any earlier resourceVersion now gets 410 Gone. */
  compact(): void {
    this.storage.compact();
  }

  /** A restart from a restored etcd: connections drop, every object gets a new resourceVersion. */
  restart(): void {
    this.dropConnections();
    this.storage.restart();
  }

  /** Refuses every connection for `ms` (and cuts the open ones); resolves when reachable again. */
  async unreachableFor(ms: number): Promise<void> {
    this.unreachableUntil = Date.now() + ms;
    this.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  private dropConnections(): void {
    this.watches.dropAll();
    for (const socket of this.sockets) socket.destroy();
  }

  injectFault(fault: Fault): void {
    this.faults.push({ ...fault, times: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Installs or removes a CRD-backed resource; removing deletes its objects and ends its watches. */
  setInstalled(group: string, plural: string, installed: boolean): void {
    const key = resourceKey(group, plural);
    if (installed) {
      this.uninstalled.delete(key);
      return;
    }
    this.uninstalled.add(key);
    for (const o of this.storage.list(key)) this.storage.remove(key, o.metadata.namespace, o.metadata.name);
    this.watches.dropAll((k) => k === key);
  }

  private installed = (r: ServedResource): boolean => !this.uninstalled.has(resourceKey(r.group, r.plural));

  /** Writes a kubeconfig for this server and returns its path. */
  writeKubeconfig(dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-kube-')), namespace = 'default'): string {
    const file = path.join(dir, 'kubeconfig');
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'test', user: { token: 'test-admin-token' } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'test', namespace } }],
      'current-context': 'test',
    };
    writeFileSync(file, JSON.stringify(config, null, 2));
    return file;
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://apiserver');
      const body = await readBody(req);
      const recorded = this.requests.length;
      const reply = this.route(req, res, url, body);
      const request = this.requests.length > recorded ? this.requests[recorded] : undefined;
      // The write is applied already: a delay holds back only its answer, as a server that applied
      // a write and answered after the client's timeout does.
      if (reply && request) await this.delays.hold(request, (gone) => res.on('close', gone));
      if (reply && !res.destroyed) send(res, reply.status, reply.body);
    } catch (err) {
      const apiError =
        err instanceof ApiError
          ? err
          : new ApiError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`);
      if (!res.headersSent) send(res, apiError.code, apiError.toStatus(), apiError.details?.retryAfterSeconds);
    }
  }

  /** Returns the reply, or undefined when the response is a watch stream already being written. */
  private route(req: IncomingMessage, res: ServerResponse, url: URL, rawBody: string): Reply | undefined {
    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'GET') {
      const doc = this.discovery(parts);
      if (doc !== undefined) return { status: 200, body: doc };
    }
    const route = parseRoute(parts);
    if (!route) throw errors.noSuchPath();
    const verb = verbOf(req.method ?? 'GET', route, url.searchParams);
    const { resource: r } = route;
    const createdName = verb === 'create' && route.name === undefined ? nameInBody(rawBody) : undefined;
    this.requests.push({
      verb,
      group: r.group,
      version: route.version,
      resource: r.plural,
      ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
      ...(route.name !== undefined ? { name: route.name } : {}),
      ...(route.subresource !== undefined ? { subresource: route.subresource } : {}),
      ...(createdName !== undefined ? { createdName } : {}),
      dryRun: url.searchParams.getAll('dryRun').includes('All'),
      userAgent: req.headers['user-agent'] ?? '',
    });
    // Recorded first: a call for a CRD that is not installed still needs RBAC on a real cluster.
    if (!this.installed(r)) throw errors.noSuchPath();
    this.applyFault(this.requests[this.requests.length - 1]!);
    if (r.createOnly && verb !== 'create') throw errors.methodNotAllowed(req.method ?? '');
    if (
      route.subresource !== undefined &&
      (!r.subresources.includes(route.subresource) || !['get', 'update', 'patch'].includes(verb))
    ) {
      throw errors.noSuchPath();
    }
    let body: unknown;
    if (rawBody !== '') {
      try {
        body = JSON.parse(rawBody);
      } catch {
        throw errors.badRequest('the request body is not valid JSON');
      }
    }
    const request: ResourceRequest = {
      ...route,
      query: url.searchParams,
      contentType: (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim(),
      body,
    };
    const ctx: HandlerContext = { storage: this.storage, tokens: this.tokens };
    switch (verb) {
      case 'watch':
        this.watches.open(
          {
            resource: r,
            version: route.version,
            ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
            matches: matcherOf(url.searchParams),
            ...(url.searchParams.has('resourceVersion')
              ? { resourceVersion: url.searchParams.get('resourceVersion')! }
              : {}),
            bookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
            ...(url.searchParams.has('timeoutSeconds')
              ? { timeoutSeconds: Number(url.searchParams.get('timeoutSeconds')) }
              : {}),
          },
          res,
        );
        return undefined;
      case 'list':
        return verbs.list(ctx, request);
      case 'get':
        return verbs.get(ctx, request);
      case 'create':
        return verbs.create(ctx, request);
      case 'update':
        return verbs.update(ctx, request);
      case 'patch':
        return verbs.patch(ctx, request);
      case 'delete':
        return verbs.remove(ctx, request);
      case 'deletecollection':
        return verbs.removeCollection(ctx, request);
      default:
        throw errors.methodNotAllowed(req.method ?? '');
    }
  }

  private applyFault(request: RecordedRequest): void {
    const { verb, resource } = request;
    const i = this.faults.findIndex(
      (f) =>
        (f.verb === undefined || f.verb === verb) &&
        (f.group === undefined || f.group === request.group) &&
        (f.resource === undefined || f.resource === resource) &&
        (f.subresource === undefined || f.subresource === (request.subresource ?? '')) &&
        (f.namespace === undefined || f.namespace === request.namespace) &&
        (f.name === undefined || f.name === (request.name ?? request.createdName)) &&
        (f.userAgent === undefined || request.userAgent.includes(f.userAgent)),
    );
    if (i < 0) return;
    const fault = this.faults[i]!;
    fault.times = fault.times! - 1;
    if (fault.times <= 0) this.faults.splice(i, 1);
    const reason =
      fault.reason ?? (fault.status === 429 ? 'TooManyRequests' : fault.status >= 500 ? 'InternalError' : 'BadRequest');
    const details = fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : undefined;
    throw new ApiError(fault.status, reason, fault.message ?? `injected fault for ${verb} ${resource}`, details);
  }

  private discovery(parts: string[]): unknown {
    const p = parts.join('/');
    if (p === 'version') return SERVER_VERSION;
    if (p === 'healthz' || p === 'readyz' || p === 'livez') return 'ok';
    if (p === 'api') return apiVersions();
    if (p === 'apis') return groupList(this.installed);
    if (parts.length === 2 && parts[0] === 'api') return resourceList('', parts[1]!, this.installed);
    if (parts.length === 3 && parts[0] === 'apis') return resourceList(parts[1]!, parts[2]!, this.installed);
    return undefined;
  }
}

export { MAX_BODY_BYTES };
