// Keeps the ValidatingWebhookConfigurations of this revision pointing at us: writes the mesh
// root into every webhook's caBundle, and switches failurePolicy from Ignore to Fail once a
// dry-run proves the API server really calls the webhook (istiod's validation controller).
// Runs only on the leader. Retries back off from 100 ms to 1 min per configuration, and a
// configuration that someone keeps changing back is rewritten at most once per backoff step.

import { X509Certificate } from 'node:crypto';
import { Watch } from '@kubernetes/client-node';
import { scopedLogger } from '../log/logger';
import type { ServingCertSource } from '../contract/serving-cert';
import { LEASE_NAMES } from '../contract/leader';
import type { KubeObject } from '../store/types';
import { backoffDelay, type BackoffPolicy } from '../store/kube/backoff';
import { resourcePath, type KubeClient } from '../store/kube/client';
import { KubeWriter, type WriteOptions } from '../store/kube/writes';
import {
  MIN_WATCH_TIMEOUT_SECONDS,
  randomWatchTimeoutSeconds,
  StallWatchdog,
  WATCH_STALL_MARGIN_MS,
} from '../store/kube/watch-liveness';
import { webhookRejectsInvalidConfig } from './readiness-probe';

const log = scopedLogger('webhook');

export const REVISION_LABEL = 'istio.io/rev';
export const WEBHOOK_CONFIG_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 60_000 };
/** istiod's leader-election lease for this controller. */
export const VALIDATION_LEASE = LEASE_NAMES.validationController;
const WEBHOOKS = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations' };
/** The relist and per-configuration backoffs are this controller's retry loops. */
const ONE_TRY: WriteOptions = { maxAttempts: 1 };

/** What a watch event hands over: JSON from the API server, so not even metadata is promised. */
interface WatchedObject {
  metadata?: { name?: string };
}

interface Webhook {
  clientConfig?: { caBundle?: string };
  failurePolicy?: string;
}

/** The bundle must start with a parseable CERTIFICATE block, or nothing is written. */
export function caBundleError(pem: string): string | undefined {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m) return 'the CA bundle has no PEM block';
  if (m[1] !== 'CERTIFICATE') return `the first PEM block of the CA bundle is ${m[1]}, not CERTIFICATE`;
  try {
    new X509Certificate(m[0]);
    return undefined;
  } catch (e) {
    return `the CA bundle's first certificate does not parse: ${(e as Error).message}`;
  }
}

/**
 * The configuration with every caBundle set and, when `failClose`, every explicit failurePolicy
 * set to Fail; undefined when it already is so (no write needed).
 */
export function desiredWebhookConfig(
  current: KubeObject,
  caBundleBase64: string,
  failClose: boolean,
): KubeObject | undefined {
  const webhooks = (current['webhooks'] as Webhook[] | undefined) ?? [];
  const stale = webhooks.some(
    (w) =>
      w.clientConfig?.caBundle !== caBundleBase64 ||
      (failClose && w.failurePolicy !== undefined && w.failurePolicy !== 'Fail'),
  );
  if (!stale) return undefined;
  const next = structuredClone(current);
  for (const w of (next['webhooks'] as Webhook[] | undefined) ?? []) {
    w.clientConfig = { ...(w.clientConfig ?? {}), caBundle: caBundleBase64 };
    if (failClose) w.failurePolicy = 'Fail';
  }
  return next;
}

export interface WebhookConfigControllerOptions {
  client: KubeClient;
  revision: string;
  /** istiod's namespace, where the dry-run Gateway is "created". */
  namespace: string;
  /** The mesh root comes from here (rootsPem); a change rewrites every bundle. */
  certs: ServingCertSource;
  /** Replaceable in tests; defaults to the dry-run Gateway probe. */
  probe?: () => Promise<{ ready: boolean; detail: string }>;
  backoff?: BackoffPolicy;
  /** The watch's least timeout (it asks for [this, 2 x this)); tests shorten it. Default client-go's 5 min. */
  watchTimeoutSeconds?: number;
  /** A watch silent past its timeout plus this long is restarted; tests shorten it. */
  stallMarginMs?: number;
}

interface ItemState {
  attempts: number;
  lastWriteAt: number;
  timer?: NodeJS.Timeout;
  running: boolean;
  again: boolean;
}

export class WebhookConfigController {
  private readonly items = new Map<string, ItemState>();
  private readonly backoff: BackoffPolicy;
  private readonly probe: () => Promise<{ ready: boolean; detail: string }>;
  private failClose = false;
  private stopped = false;
  private watchAbort?: AbortController;
  private relistTimer?: NodeJS.Timeout;
  private relistAttempts = 0;
  private unsubscribe?: () => void;
  private readonly writer: KubeWriter;
  private readonly watchdog = new StallWatchdog((silentForMs) => {
    log.warn({ silentForMs }, 'the webhook configuration watch sent nothing; restarting it');
    this.watchAbort?.abort();
  });

  constructor(private readonly opts: WebhookConfigControllerOptions) {
    this.backoff = opts.backoff ?? WEBHOOK_CONFIG_BACKOFF;
    this.writer = new KubeWriter(opts.client);
    this.probe = opts.probe ?? (() => webhookRejectsInvalidConfig(opts.client, opts.namespace, opts.revision));
  }

  start(): void {
    this.unsubscribe = this.opts.certs.onChange(() => {
      // A new root must reach the API server at once, whatever the backoff state.
      for (const name of this.items.keys()) this.schedule(name, true);
    });
    void this.listAndWatch();
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.watchdog.clear();
    this.watchAbort?.abort();
    clearTimeout(this.relistTimer);
    for (const s of this.items.values()) clearTimeout(s.timer);
    return Promise.resolve();
  }

  /** True once the dry-run probe has shown the webhook rejecting invalid config. */
  get failingClosed(): boolean {
    return this.failClose;
  }

  private get selector(): string {
    return `${REVISION_LABEL}=${this.opts.revision}`;
  }

  private async listAndWatch(): Promise<void> {
    if (this.stopped) return;
    try {
      const list = await this.writer.list(WEBHOOKS, { labelSelector: this.selector }, ONE_TRY);
      for (const item of list.items) this.schedule(item.metadata.name, false);
      const watch = new Watch(this.opts.client.kubeConfig);
      // Spread like client-go's (see watch-liveness.ts): the API server ends it, and it is resumed by a relist.
      const timeoutSeconds = randomWatchTimeoutSeconds(this.opts.watchTimeoutSeconds ?? MIN_WATCH_TIMEOUT_SECONDS);
      const watchState = { ended: false };
      this.watchAbort = await watch.watch(
        resourcePath(WEBHOOKS),
        {
          labelSelector: this.selector,
          resourceVersion: list.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        (phase: string, obj: WatchedObject | null | undefined) => {
          this.watchdog.touch();
          if ((phase === 'ADDED' || phase === 'MODIFIED') && obj?.metadata?.name)
            this.schedule(obj.metadata.name, false);
        },
        (err: unknown) => {
          watchState.ended = true;
          this.watchdog.clear();
          this.rewatch(err);
        },
      );
      if (!watchState.ended)
        this.watchdog.arm(timeoutSeconds * 1000 + (this.opts.stallMarginMs ?? WATCH_STALL_MARGIN_MS));
      this.relistAttempts = 0;
    } catch (err) {
      this.rewatch(err);
    }
  }

  private rewatch(err: unknown): void {
    if (this.stopped) return;
    const delay = backoffDelay(++this.relistAttempts, this.backoff);
    if (err) log.warn({ err: (err as Error).message, delay }, 'watching webhook configurations failed; retrying');
    this.relistTimer = setTimeout(() => void this.listAndWatch(), err ? delay : 0);
    this.relistTimer.unref();
  }

  private state(name: string): ItemState {
    let s = this.items.get(name);
    if (!s) this.items.set(name, (s = { attempts: 0, lastWriteAt: 0, running: false, again: false }));
    return s;
  }

  /** Queues a reconcile: at once after a quiet period, else after the item's backoff step. */
  private schedule(name: string, immediate: boolean): void {
    if (this.stopped) return;
    const s = this.state(name);
    if (s.running) {
      s.again = true;
      return;
    }
    if (s.timer) {
      if (!immediate) return;
      clearTimeout(s.timer);
    }
    if (Date.now() - s.lastWriteAt > this.backoff.maxMs) s.attempts = 0;
    const delay = immediate || s.attempts === 0 ? 0 : backoffDelay(s.attempts, this.backoff);
    s.timer = setTimeout(() => void this.run(name), delay);
    s.timer.unref();
  }

  private async run(name: string): Promise<void> {
    const s = this.state(name);
    s.timer = undefined;
    s.running = true;
    let retry = false;
    try {
      retry = await this.reconcile(name, s);
    } catch (err) {
      log.warn(
        { webhookConfiguration: name, err: (err as Error).message },
        'updating the webhook configuration failed; retrying',
      );
      retry = true;
    } finally {
      s.running = false;
    }
    if (retry || s.again) {
      s.again = false;
      if (retry) s.attempts++;
      this.schedule(name, false);
    }
  }

  /** One pass over a configuration; returns true when it must be retried later. */
  private async reconcile(name: string, s: ItemState): Promise<boolean> {
    const cert = this.opts.certs.current();
    const roots = cert.servingCaPem ?? cert.rootsPem;
    const bundleError = caBundleError(roots);
    if (bundleError) {
      // A bad bundle will not fix itself by retrying; a new root triggers a new pass.
      log.error({ webhookConfiguration: name }, bundleError);
      return false;
    }
    const caBundle = Buffer.from(roots).toString('base64');
    const ref = { ...WEBHOOKS, name };
    const current = await this.writer.get(ref, ONE_TRY);
    if (!current) {
      this.items.delete(name);
      return false;
    }
    if (current.metadata.labels?.[REVISION_LABEL] !== this.opts.revision) return false;
    if (!this.failClose) {
      const outcome = await this.probe();
      if (outcome.ready) {
        this.failClose = true;
        log.info({ detail: outcome.detail }, 'the webhook rejects invalid config: switching failurePolicy to Fail');
      } else {
        log.info({ detail: outcome.detail }, 'the webhook is not in the request path yet; keeping failurePolicy');
      }
    }
    const next = desiredWebhookConfig(current, caBundle, this.failClose);
    if (next) {
      // A 409 (changed since the read) fails this pass; the item's backoff retries from a fresh read.
      await this.writer.update(ref, next, ONE_TRY);
      s.lastWriteAt = Date.now();
      s.attempts++;
      log.info(
        { webhookConfiguration: name, failurePolicy: this.failClose ? 'Fail' : 'unchanged' },
        'webhook configuration updated',
      );
    }
    // Until the probe passes, keep trying so Ignore becomes Fail as soon as it can.
    return !this.failClose;
  }
}

/**
 * Starts the controller in Kubernetes mode while this replica leads, when
 * VALIDATION_WEBHOOK_CONFIG_NAME is set (istiod's switch; the name itself is not matched).
 */
export function startWebhookConfigController(
  ctx: {
    options: { mode: string; env: { VALIDATION_WEBHOOK_CONFIG_NAME: string; REVISION: string; POD_NAMESPACE: string } };
    leader: { runWhileLeader(lease: string, run: () => () => void | Promise<void>): void };
    servingCerts: ServingCertSource;
  },
  client: KubeClient,
): void {
  const { mode, env } = ctx.options;
  if (mode !== 'kubernetes' || env.VALIDATION_WEBHOOK_CONFIG_NAME === '') return;
  ctx.leader.runWhileLeader(VALIDATION_LEASE, () => {
    const controller = new WebhookConfigController({
      client,
      revision: env.REVISION,
      namespace: env.POD_NAMESPACE,
      certs: ctx.servingCerts,
    });
    controller.start();
    return () => controller.stop();
  });
}
