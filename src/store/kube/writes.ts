// The few writes istiod-ts makes, as small typed helpers: a ConfigMap (root certificate
// distribution), a Secret created only if absent (the self-signed CA), a webhook configuration's
// caBundle/failurePolicy, TokenReviews (caller authentication) and dry-run creates (validation).
// Conflicts (409) are retried from a fresh read; 429, 5xx and network errors back off with jitter.
// Every call has a timeout and every retry loop a bound.

import { scopedLogger } from '../../log/logger';
import type { KubeObject } from '../types';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff';
import { KubeApiError, resourcePath, type KubeClient } from './client';
import { kindOf } from '../kinds';

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

export interface TokenReviewResult {
  authenticated: boolean;
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
  /** From user.extra authentication.kubernetes.io/pod-name (bound service account tokens). */
  podName?: string;
  podUid?: string;
  audiences: string[];
  error?: string;
}

export type ConfigMapAction = 'created' | 'updated' | 'unchanged';

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };
const WEBHOOKS = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations' };
const TOKEN_REVIEWS = { group: 'authentication.k8s.io', version: 'v1', plural: 'tokenreviews' };

function isTransient(err: unknown): boolean {
  if (err instanceof KubeApiError) return err.status === 429 || err.status >= 500;
  return true; // connection refused or reset, timeouts
}

function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409;
}

function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => a![k] === b?.[k]);
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
  private async call<T>(what: string, req: Parameters<KubeClient['call']>[0]): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.call<T>({ ...req, timeoutMs: this.policy.timeoutMs });
      } catch (err) {
        if (!isTransient(err) || attempt >= this.policy.maxAttempts) throw err;
        const retryAfterMs = err instanceof KubeApiError && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : 0;
        const delay = Math.min(this.policy.backoff.maxMs, Math.max(retryAfterMs, backoffDelay(attempt, this.policy.backoff)));
        log.debug({ what, attempt, delay, err: (err as Error).message }, 'write failed; retrying');
        await sleep(delay);
      }
    }
  }

  private async getOrUndefined<T>(what: string, path: string): Promise<T | undefined> {
    try {
      return await this.call<T>(what, { method: 'GET', path });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Read-modify-write rounds until one is not beaten by another writer. */
  private async withConflictRetries<T>(what: string, round: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await round();
      } catch (err) {
        if (!isConflict(err) || attempt >= this.policy.conflictAttempts) throw err;
        log.debug({ what, attempt }, 'conflict; retrying from a fresh read');
      }
    }
  }

  /** Makes ConfigMap namespace/name hold exactly `data` (labels are added, never removed). */
  async createOrUpdateConfigMap(namespace: string, name: string, data: Record<string, string>, labels: Record<string, string> = {}): Promise<{ configMap: KubeObject; action: ConfigMapAction }> {
    const what = `ConfigMap ${namespace}/${name}`;
    const path = resourcePath({ ...CONFIGMAPS, namespace, name });
    return this.withConflictRetries(what, async () => {
      const current = await this.getOrUndefined<KubeObject>(what, path);
      if (!current) {
        const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
        const created = await this.call<KubeObject>(what, { method: 'POST', path: resourcePath({ ...CONFIGMAPS, namespace }), body });
        return { configMap: created, action: 'created' as const };
      }
      const mergedLabels = { ...(current.metadata.labels ?? {}), ...labels };
      if (sameStrings(current.data, data) && sameStrings(current.metadata.labels, mergedLabels)) return { configMap: current, action: 'unchanged' as const };
      const body = { ...current, metadata: { ...current.metadata, labels: mergedLabels }, data };
      const updated = await this.call<KubeObject>(what, { method: 'PUT', path, body });
      return { configMap: updated, action: 'updated' as const };
    });
  }

  /** Creates the Secret unless it exists; either way returns the Secret that won. */
  async createSecretIfAbsent(secret: KubeObject): Promise<{ secret: KubeObject; created: boolean }> {
    const { name, namespace } = secret.metadata;
    if (!namespace) throw new Error(`Secret ${name}: metadata.namespace is required`);
    const what = `Secret ${namespace}/${name}`;
    try {
      const created = await this.call<KubeObject>(what, { method: 'POST', path: resourcePath({ ...SECRETS, namespace }), body: { apiVersion: 'v1', kind: 'Secret', ...secret } });
      return { secret: created, created: true };
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409 && err.reason === 'AlreadyExists')) throw err;
      // Another replica created it first: its content is the one every replica must use.
      const winner = await this.call<KubeObject>(what, { method: 'GET', path: resourcePath({ ...SECRETS, namespace, name }) });
      return { secret: winner, created: false };
    }
  }

  async getSecret(namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.getOrUndefined<KubeObject>(`Secret ${namespace}/${name}`, resourcePath({ ...SECRETS, namespace, name }));
  }

  /**
   * Applies `mutate` to the current ValidatingWebhookConfiguration and writes it back; `mutate`
   * returns undefined when nothing needs to change. Returns undefined when the configuration
   * does not exist (it is installed by the chart, not by us).
   */
  async updateValidatingWebhookConfiguration(name: string, mutate: (current: KubeObject) => KubeObject | undefined): Promise<KubeObject | undefined> {
    const what = `ValidatingWebhookConfiguration ${name}`;
    const path = resourcePath({ ...WEBHOOKS, name });
    return this.withConflictRetries(what, async () => {
      const current = await this.getOrUndefined<KubeObject>(what, path);
      if (!current) return undefined;
      const next = mutate(structuredClone(current));
      if (next === undefined) return current;
      return this.call<KubeObject>(what, { method: 'PUT', path, body: next });
    });
  }

  /** Sets every webhook's caBundle (base64 PEM) and, when given, failurePolicy. */
  async setWebhookCaBundle(name: string, caBundleBase64: string, failurePolicy?: 'Fail' | 'Ignore'): Promise<KubeObject | undefined> {
    return this.updateValidatingWebhookConfiguration(name, (current) => {
      const webhooks = (current['webhooks'] as { clientConfig?: { caBundle?: string }; failurePolicy?: string }[] | undefined) ?? [];
      const changed = webhooks.some((w) => w.clientConfig?.caBundle !== caBundleBase64 || (failurePolicy !== undefined && w.failurePolicy !== failurePolicy));
      if (!changed) return undefined;
      for (const w of webhooks) {
        w.clientConfig = { ...(w.clientConfig ?? {}), caBundle: caBundleBase64 };
        if (failurePolicy !== undefined) w.failurePolicy = failurePolicy;
      }
      return current;
    });
  }

  /** Asks the API server who a bearer token belongs to. */
  async createTokenReview(token: string, audiences: readonly string[] = []): Promise<TokenReviewResult> {
    const body = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(audiences.length > 0 ? { audiences: [...audiences] } : {}) },
    };
    const review = await this.call<{ status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; audiences?: string[]; error?: string } }>(
      'TokenReview',
      { method: 'POST', path: resourcePath(TOKEN_REVIEWS), body },
    );
    const status = review.status ?? {};
    const extra = status.user?.extra ?? {};
    const podName = extra['authentication.kubernetes.io/pod-name']?.[0];
    const podUid = extra['authentication.kubernetes.io/pod-uid']?.[0];
    return {
      authenticated: status.authenticated === true,
      username: status.user?.username ?? '',
      uid: status.user?.uid ?? '',
      groups: status.user?.groups ?? [],
      extra,
      ...(podName !== undefined ? { podName } : {}),
      ...(podUid !== undefined ? { podUid } : {}),
      audiences: status.audiences ?? [],
      ...(status.error ? { error: status.error } : {}),
    };
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
    const path = resourcePath({ group, version, plural, ...(namespaced ? { namespace: object.metadata.namespace ?? 'default' } : {}) });
    return this.call<KubeObject>(`dry-run ${object.kind} ${object.metadata.name}`, { method: 'POST', path, query: { dryRun: 'All' }, body: object });
  }
}
