// The one write path to the API server. Every create, update (object or status subresource),
// patch (JSON patch with `test` preconditions, merge, strategic merge), dry run and
// read-modify-write goes through KubeWriter, so the policy is decided once: every call has a
// timeout, 429/5xx/network errors back off with jitter (Retry-After honoured) up to an attempt
// bound, and a 409 Conflict is retried from a fresh read with backoff up to a round bound.
// On top sit the typed writes istiod-ts makes: the root ConfigMap, the CA Secret created only if
// absent, a webhook configuration's caBundle/failurePolicy, TokenReviews and dry-run creates.

import { scopedLogger } from '../../log/logger';
import type { KubeObject } from '../types';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff';
import { KubeApiError, resourcePath, type KubeClient, type KubeRequest, type ResourcePath } from './client';
import { kindOf } from '../kinds';
import { isAlreadyExists, isConflict, isNotFound, isTransient } from './api-errors';
import { tokenReviewResult, type TokenReviewAnswer, type TokenReviewResult } from './token-review';

export { isAlreadyExists, isConflict, isNotFound, unlessConflict } from './api-errors';
export type { TokenReviewResult } from './token-review';

const log = scopedLogger('kube');

export interface WritePolicy {
  /** Bound on each HTTP call. */
  timeoutMs: number;
  /** Attempts for one call when the server is overloaded or failing (429, 5xx, network). */
  maxAttempts: number;
  /** Read-modify-write rounds when another writer wins (409 Conflict). */
  conflictAttempts: number;
  backoff: BackoffPolicy;
}

export const DEFAULT_WRITE_POLICY: WritePolicy = {
  timeoutMs: 10_000,
  maxAttempts: 5,
  conflictAttempts: 5,
  backoff: { initialMs: 200, maxMs: 5_000 },
};

export type ConfigMapAction = 'created' | 'updated' | 'unchanged';

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };
const WEBHOOKS = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations' };
const TOKEN_REVIEWS = { group: 'authentication.k8s.io', version: 'v1', plural: 'tokenreviews' };

/** A collection: group, version, plural and (for namespaced kinds) the namespace. */
export type CollectionRef = Omit<ResourcePath, 'name' | 'subresource'>;
/** One object of a collection. */
export type ObjectRef = CollectionRef & { name: string };

export interface WriteOptions {
  /** Overrides the policy's bound on this call. */
  timeoutMs?: number;
  /** Overrides the policy's attempt bound; 1 for a caller that has its own retry loop (a lease). */
  maxAttempts?: number;
  /** dryRun=All: the server validates and runs admission but stores nothing. */
  dryRun?: boolean;
  /** Write the status subresource: only status changes, whatever else the body holds. */
  status?: boolean;
  /** Cancels the call and its retries (the caller that wanted the answer went away). */
  signal?: AbortSignal;
}

/** RFC 6902 operations; `test` makes the whole patch fail (422) unless the value is still there. */
export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

export type Patch = { type: 'json'; ops: JsonPatchOp[] } | { type: 'merge' | 'strategic'; body: object };

const PATCH_CONTENT_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => a?.[k] === b?.[k]);
}

function describe(ref: CollectionRef & { name?: string }): string {
  return `${ref.plural} ${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name ?? ''}`;
}

export class KubeWriter {
  private readonly policy: WritePolicy;

  constructor(
    private readonly client: KubeClient,
    policy: Partial<WritePolicy> = {},
  ) {
    this.policy = { ...DEFAULT_WRITE_POLICY, ...policy };
  }

  /** One API call, retried on 429/5xx/network errors with jittered backoff (Retry-After honoured). */
  private async call<T>(what: string, req: KubeRequest, opts: WriteOptions = {}): Promise<T> {
    const maxAttempts = opts.maxAttempts ?? this.policy.maxAttempts;
    const query = opts.dryRun ? { ...req.query, dryRun: 'All' } : req.query;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.call<T>({
          ...req,
          ...(query ? { query } : {}),
          timeoutMs: opts.timeoutMs ?? this.policy.timeoutMs,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
      } catch (err) {
        if (!isTransient(err) || attempt >= maxAttempts || opts.signal?.aborted) throw err;
        const retryAfterMs =
          err instanceof KubeApiError && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : 0;
        const delay = Math.min(
          this.policy.backoff.maxMs,
          Math.max(retryAfterMs, backoffDelay(attempt, this.policy.backoff)),
        );
        log.debug({ what, attempt, delay, err: (err as Error).message }, 'write failed; retrying');
        await sleep(delay);
        if (opts.signal?.aborted) throw err;
      }
    }
  }

  /** The object, or undefined when it does not exist. */
  async get<T = KubeObject>(ref: ObjectRef, opts: WriteOptions = {}): Promise<T | undefined> {
    try {
      return await this.call<T>(describe(ref), { method: 'GET', path: resourcePath(ref) }, opts);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One page of a collection (a read the writers need: what to repair). */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape it expects of the API server's JSON, as with get and create
  async list<T = KubeObject>(
    ref: CollectionRef,
    query: Record<string, string>,
    opts: WriteOptions = {},
  ): Promise<{ resourceVersion: string; items: T[] }> {
    const page = await this.call<{ metadata?: { resourceVersion?: string }; items?: T[] }>(
      describe(ref),
      { method: 'GET', path: resourcePath(ref), query },
      opts,
    );
    return { resourceVersion: page.metadata?.resourceVersion ?? '', items: page.items ?? [] };
  }

  /** POST to the collection (a name in `ref` only names the call in logs). */
  async create<T = KubeObject>(
    ref: CollectionRef & { name?: string },
    body: unknown,
    opts: WriteOptions = {},
  ): Promise<T> {
    const { group, version, plural, namespace } = ref;
    return this.call<T>(
      describe(ref),
      {
        method: 'POST',
        path: resourcePath({ group, version, plural, ...(namespace !== undefined ? { namespace } : {}) }),
        body,
      },
      opts,
    );
  }

  /** PUT: the body's resourceVersion is the precondition (409 when another writer was first). */
  async update<T = KubeObject>(ref: ObjectRef, body: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.call<T>(
      describe(ref),
      { method: 'PUT', path: resourcePath({ ...ref, ...(opts.status ? { subresource: 'status' } : {}) }), body },
      opts,
    );
  }

  async updateStatus<T = KubeObject>(ref: ObjectRef, body: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.update<T>(ref, body, { ...opts, status: true });
  }

  /** PATCH; a failed JSON patch `test` is a 422 and is not retried (the precondition is gone). */
  async patch<T = KubeObject>(ref: ObjectRef, patch: Patch, opts: WriteOptions = {}): Promise<T> {
    const path = resourcePath({ ...ref, ...(opts.status ? { subresource: 'status' } : {}) });
    const body = patch.type === 'json' ? patch.ops : patch.body;
    return this.call<T>(
      describe(ref),
      { method: 'PATCH', path, body, contentType: PATCH_CONTENT_TYPES[patch.type] },
      opts,
    );
  }

  /** Creates unless it exists; either way returns the object that won (another replica's, if it was first). */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape it expects of the API server's JSON, as with get and create
  async createIfAbsent<T = KubeObject>(
    ref: ObjectRef,
    body: unknown,
    opts: WriteOptions = {},
  ): Promise<{ object: T; created: boolean }> {
    return this.createOr(ref, body, opts, async () => {
      const winner = await this.get<T>(ref, opts);
      if (winner === undefined) throw new Error(`${describe(ref)} was reported as existing but cannot be read`);
      return winner;
    });
  }

  /**
   * Creates, or replaces what exists without a resourceVersion (last writer wins): for objects
   * whose whole content is ours, written without a read (the caller may hold no get permission).
   */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape it expects of the API server's JSON, as with get and create
  async createOrReplace<T = KubeObject>(
    ref: ObjectRef,
    body: unknown,
    opts: WriteOptions = {},
  ): Promise<{ object: T; created: boolean }> {
    return this.createOr(ref, body, opts, () => this.update<T>(ref, body, opts));
  }

  /** Creates; when the object already exists (409 AlreadyExists), what `existing` returns stands for it. */
  private async createOr<T>(
    ref: ObjectRef,
    body: unknown,
    opts: WriteOptions,
    existing: () => Promise<T>,
  ): Promise<{ object: T; created: boolean }> {
    try {
      return { object: await this.create<T>(ref, body, opts), created: true };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return { object: await existing(), created: false };
    }
  }

  /**
   * Read-modify-write: applies `mutate` to a copy of the current object and writes it back,
   * from a fresh read after each 409. `mutate` returns undefined when nothing needs to change.
   * Undefined when the object does not exist.
   */
  async modify<T extends { metadata: object } = KubeObject>(
    ref: ObjectRef,
    mutate: (current: T) => T | undefined,
    opts: WriteOptions = {},
  ): Promise<{ object: T; changed: boolean } | undefined> {
    return this.withConflictRetries(describe(ref), async () => {
      const current = await this.get<T>(ref, opts);
      if (current === undefined) return undefined;
      const next = mutate(structuredClone(current));
      if (next === undefined) return { object: current, changed: false };
      return { object: await this.update<T>(ref, next, opts), changed: true };
    });
  }

  /** Rounds until one is not beaten by another writer, with jittered backoff between rounds. */
  private async withConflictRetries<T>(what: string, round: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await round();
      } catch (err) {
        if (!isConflict(err) || attempt >= this.policy.conflictAttempts) throw err;
        const delay = backoffDelay(attempt, this.policy.backoff);
        log.debug({ what, attempt, delay }, 'conflict; retrying from a fresh read');
        await sleep(delay);
      }
    }
  }

  /** Makes ConfigMap namespace/name hold exactly `data` (labels are added, never removed). */
  async createOrUpdateConfigMap(
    namespace: string,
    name: string,
    data: Record<string, string>,
    labels: Record<string, string> = {},
  ): Promise<{ configMap: KubeObject; action: ConfigMapAction }> {
    const ref = { ...CONFIGMAPS, namespace, name };
    return this.withConflictRetries(describe(ref), async () => {
      const current = await this.get(ref);
      if (!current) {
        const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
        // A 409 here (another writer created it first) starts a new round that updates theirs.
        return { configMap: await this.create(ref, body), action: 'created' as const };
      }
      const mergedLabels = { ...(current.metadata.labels ?? {}), ...labels };
      if (sameStrings(current.data, data) && sameStrings(current.metadata.labels, mergedLabels))
        return { configMap: current, action: 'unchanged' as const };
      const body = { ...current, metadata: { ...current.metadata, labels: mergedLabels }, data };
      return { configMap: await this.update(ref, body), action: 'updated' as const };
    });
  }

  /** Creates the Secret unless it exists; either way returns the Secret that won. */
  async createSecretIfAbsent(secret: KubeObject): Promise<{ secret: KubeObject; created: boolean }> {
    const { name, namespace } = secret.metadata;
    if (!namespace) throw new Error(`Secret ${name}: metadata.namespace is required`);
    // Another replica may create it first: its content is the one every replica must use.
    const { object, created } = await this.createIfAbsent(
      { ...SECRETS, namespace, name },
      { apiVersion: 'v1', kind: 'Secret', ...secret },
    );
    return { secret: object, created };
  }

  async getSecret(namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.get({ ...SECRETS, namespace, name });
  }

  /**
   * Applies `mutate` to the current ValidatingWebhookConfiguration and writes it back; `mutate`
   * returns undefined when nothing needs to change. Returns undefined when the configuration
   * does not exist (it is installed by the chart, not by us).
   */
  async updateValidatingWebhookConfiguration(
    name: string,
    mutate: (current: KubeObject) => KubeObject | undefined,
  ): Promise<KubeObject | undefined> {
    return (await this.modify({ ...WEBHOOKS, name }, mutate))?.object;
  }

  /** Sets every webhook's caBundle (base64 PEM) and, when given, failurePolicy. */
  async setWebhookCaBundle(
    name: string,
    caBundleBase64: string,
    failurePolicy?: 'Fail' | 'Ignore',
  ): Promise<KubeObject | undefined> {
    return this.updateValidatingWebhookConfiguration(name, (current) => {
      const webhooks =
        (current['webhooks'] as { clientConfig?: { caBundle?: string }; failurePolicy?: string }[] | undefined) ?? [];
      const changed = webhooks.some(
        (w) =>
          w.clientConfig?.caBundle !== caBundleBase64 ||
          (failurePolicy !== undefined && w.failurePolicy !== failurePolicy),
      );
      if (!changed) return undefined;
      for (const w of webhooks) {
        w.clientConfig = { ...(w.clientConfig ?? {}), caBundle: caBundleBase64 };
        if (failurePolicy !== undefined) w.failurePolicy = failurePolicy;
      }
      return current;
    });
  }

  /** Asks the API server who a bearer token belongs to. */
  async createTokenReview(
    token: string,
    audiences: readonly string[] = [],
    opts: Pick<WriteOptions, 'signal' | 'timeoutMs'> = {},
  ): Promise<TokenReviewResult> {
    const body = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(audiences.length > 0 ? { audiences: [...audiences] } : {}) },
    };
    const review = await this.create<TokenReviewAnswer>(TOKEN_REVIEWS, body, opts);
    return tokenReviewResult(review);
  }

  /** Creates with dryRun=All: the server validates (and runs admission) but stores nothing. */
  async dryRunCreate(object: KubeObject): Promise<KubeObject> {
    const info = kindOf(object.apiVersion, object.kind);
    const apiVersion = object.apiVersion ?? '';
    const slash = apiVersion.indexOf('/');
    const group = info?.group ?? (slash < 0 ? '' : apiVersion.slice(0, slash));
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const plural = info?.plural ?? `${(object.kind ?? '').toLowerCase()}s`;
    if (!object.kind || !apiVersion) throw new Error('dry-run create: the object needs apiVersion and kind');
    const namespaced = info ? info.namespaced : object.metadata.namespace !== undefined;
    return this.create(
      { group, version, plural, ...(namespaced ? { namespace: object.metadata.namespace ?? 'default' } : {}) },
      object,
      { dryRun: true },
    );
  }
}
