// Leader-election fixtures shared by the lock tests: an istiod replica as the test API server sees
// it (its lock objects, written the way client-go writes them for istiod, renewed on a timer),
// istiod-ts replicas with short timings, and a root-certificate publisher per replica.

import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { KubeLeaderElector, type LeaderTiming } from '../../../src/store/kube/leader';
import { LEADER_RECORD_ANNOTATION, LEASE_HOLDER_KEY_ANNOTATION } from '../../../src/store/kube/leader-record';
import { KubeWriter } from '../../../src/store/kube/writes';
import { KubeRootConfigMapApi, RootCertPublisher } from '../../../src/ca/roots/root-cert-publisher';
import { MemoryStore } from '../../../src/store/memory-store';
import type { TestApiServer } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { logs } from '../../../src/log/logger';

// The publisher logs every ConfigMap it writes at info; these tests count the writes instead.
logs.configure('ca:warn');

export const NS = 'istio-system';
export const ROOT_CONFIGMAP = 'istio-ca-root-cert';

/**
 * Short versions of istiod's 30 s / 15 s / 7.5 s. A ConfigMap record's times have whole seconds,
 * so a renewing holder's record changes about once a second: the lease stays above that.
 */
export const FAST: LeaderTiming = { leaseDurationMs: 2_000, renewDeadlineMs: 700, retryPeriodMs: 100 };

/** metav1.Time as Go marshals it. */
const goTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const goMicroTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');

export interface IstiodHolder {
  identity: string;
  /** holderKey: the revision, `^` first for an istiod managing a remote cluster. */
  key: string;
  transitions?: number;
}

/**
 * An istiod replica holding a lock: writes its record as istiod does (the annotation's JSON in Go's
 * field order, or a Lease spec plus the key annotation) and renews it every `everyMs` until stopped.
 */
export class IstiodReplica {
  private timer: NodeJS.Timeout | undefined;
  private readonly acquiredMs = Date.now();

  constructor(
    private readonly server: TestApiServer,
    readonly lock: { kind: 'ConfigMap' | 'Lease'; name: string },
    readonly holder: IstiodHolder,
  ) {}

  /** Writes the record once with renewTime = now. */
  renew(): void {
    const now = Date.now();
    const { identity, key, transitions = 0 } = this.holder;
    if (this.lock.kind === 'ConfigMap') {
      const record =
        `{"holderIdentity":"${identity}","holderKey":"${key}","leaseDurationSeconds":30,` +
        `"acquireTime":"${goTime(this.acquiredMs)}","renewTime":"${goTime(now)}","leaderTransitions":${transitions}}`;
      this.server.put({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: this.lock.name, namespace: NS, annotations: { [LEADER_RECORD_ANNOTATION]: record } },
      });
    } else {
      this.server.put({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: this.lock.name,
          namespace: NS,
          ...(key !== '' ? { annotations: { [LEASE_HOLDER_KEY_ANNOTATION]: key } } : {}),
        },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: 30,
          acquireTime: goMicroTime(this.acquiredMs),
          renewTime: goMicroTime(now),
          leaseTransitions: transitions,
        },
      });
    }
  }

  /** Renews like a live istiod (client-go renews every retry period). */
  keepRenewing(everyMs = 250): this {
    this.renew();
    this.timer = setInterval(() => this.renew(), everyMs);
    return this;
  }

  /** The istiod process dies: no more renewals, no release. */
  crash(): void {
    clearInterval(this.timer);
  }
}

/** The record in a lock ConfigMap's annotation, as the raw string and parsed. */
export function configMapRecord(server: TestApiServer, name: string): Record<string, unknown> | undefined {
  const cm = server.get('v1', 'ConfigMap', NS, name);
  const raw = (cm?.metadata['annotations'] as Record<string, string> | undefined)?.[LEADER_RECORD_ANNOTATION];
  return raw === undefined ? undefined : (JSON.parse(raw) as Record<string, unknown>);
}

export interface Replica {
  id: string;
  elector: KubeLeaderElector;
  /** Controller starts and stops, in order. */
  events: string[];
  running: () => boolean;
}

/** An istiod-ts replica: its own client (User-Agent istiod-ts/<id>), elector and one controller. */
export function istiodTsReplica(
  server: TestApiServer,
  id: string,
  opts: { lock: string; revision?: string; timing?: LeaderTiming; start?: () => () => void },
): Replica {
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()), `istiod-ts/${id}`);
  const elector = new KubeLeaderElector({
    client,
    namespace: NS,
    identity: id,
    timing: opts.timing ?? FAST,
    ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
  });
  const events: string[] = [];
  let running = false;
  elector.runWhileLeader(opts.lock, () => {
    events.push('start');
    running = true;
    const stop = opts.start?.();
    return () => {
      stop?.();
      events.push('stop');
      running = false;
    };
  });
  return { id, elector, events, running: () => running };
}

/** A root-certificate publisher over the replica's own client, as src/ca wires it (starts only when leading). */
export function rootCertPublisher(
  server: TestApiServer,
  id: string,
  store: MemoryStore,
  rootPem: string,
): () => () => void {
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()), `istiod-ts/${id}/root-cert`);
  const publisher = new RootCertPublisher(
    store,
    new KubeRootConfigMapApi(new KubeWriter(client)),
    ROOT_CONFIGMAP,
    () => rootPem,
  );
  return () => publisher.start(() => () => undefined);
}

/** A store holding these namespaces, as the informers would. */
export function storeWithNamespaces(names: readonly string[]): MemoryStore {
  const store = new MemoryStore();
  store.upsert(
    'Namespace',
    names.map((n) => namespace(n)),
  );
  return store;
}

/** Root-certificate ConfigMap writes (create, update, patch) per replica, told apart by the publisher's User-Agent. */
export function rootCertWrites(server: TestApiServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of server.requests) {
    if (r.resource !== 'configmaps' || !['create', 'update', 'patch'].includes(r.verb)) continue;
    const m = /^istiod-ts\/([^/]+)\/root-cert/.exec(r.userAgent);
    if (m?.[1] !== undefined) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  return counts;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
