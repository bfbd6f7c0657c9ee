// Leader election on coordination.k8s.io/v1 Leases in POD_NAMESPACE, one Lease per singleton
// controller, with client-go's semantics: a lease is free when its holder is empty or when this
// replica has seen no renewal for a lease duration (measured on the local clock from when the
// record last changed, so clock skew between replicas does not matter); the leader renews every
// retry period and, if it cannot renew for the renew deadline, stops its controllers before the
// lease can expire for the others. Stopping releases the lease so another replica takes over at once.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { LeaderElector } from '../../contract/leader';
import { scopedLogger } from '../../log/logger';
import type { KubeClient } from './client';
import { KubeWriter, unlessConflict, type ObjectRef, type WriteOptions } from './writes';

const log = scopedLogger('leader');

export { LEASE_NAMES } from '../../contract/leader';

export interface LeaderTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** client-go's and istiod's defaults: 30 s lease, 15 s renew deadline, 5 s retry. */
export const DEFAULT_LEADER_TIMING: LeaderTiming = {
  leaseDurationMs: 30_000,
  renewDeadlineMs: 15_000,
  retryPeriodMs: 5_000,
};
/** Followers poll at retryPeriod * (1 + random * ACQUIRE_JITTER), as client-go's JitterFactor. */
export const ACQUIRE_JITTER = 1.2;

export interface LeaseLeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  /** Holder identity; default POD_NAME, else the host name with a random suffix. */
  identity?: string;
  timing?: Partial<LeaderTiming>;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  spec?: LeaseSpec;
}

type StopFn = () => void | Promise<void>;

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

export function validateTiming(t: LeaderTiming): void {
  if (!(t.leaseDurationMs > t.renewDeadlineMs))
    throw new Error(
      `leader election: lease duration (${t.leaseDurationMs} ms) must exceed the renew deadline (${t.renewDeadlineMs} ms)`,
    );
  if (!(t.renewDeadlineMs > t.retryPeriodMs * ACQUIRE_JITTER)) {
    throw new Error(
      `leader election: renew deadline (${t.renewDeadlineMs} ms) must exceed ${ACQUIRE_JITTER} x retry period (${t.retryPeriodMs} ms)`,
    );
  }
}

class LeaseElection {
  private readonly runs: (() => StopFn)[] = [];
  private stops: StopFn[] = [];
  leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private observedKey = '';
  private observedAt = 0;
  private last: Lease | undefined;

  constructor(
    private readonly name: string,
    private readonly writer: KubeWriter,
    private readonly namespace: string,
    private readonly identity: string,
    private readonly timing: LeaderTiming,
  ) {}

  private get ref(): ObjectRef {
    return {
      group: 'coordination.k8s.io',
      version: 'v1',
      plural: 'leases',
      namespace: this.namespace,
      name: this.name,
    };
  }

  /** One try per call: the retry period is the retry loop, and a renewal must not outlast it. */
  private get callOptions(): WriteOptions {
    return { timeoutMs: this.timing.retryPeriodMs, maxAttempts: 1 };
  }

  add(run: () => StopFn): void {
    this.runs.push(run);
    if (this.leading) this.startOne(run);
  }

  start(): void {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.inflight = this.tick().finally(() => (this.inflight = undefined));
    }, ms);
  }

  private async tick(): Promise<void> {
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (err) {
      log.debug({ lease: this.name, err: (err as Error).message }, 'lease acquire/renew failed');
    }
    if (this.stopped) return;
    if (ok && !this.leading) this.becomeLeader();
    if (ok) this.armDeadline();
    const jitter = this.leading ? 1 : 1 + Math.random() * ACQUIRE_JITTER;
    this.schedule(this.timing.retryPeriodMs * jitter);
  }

  /** Restarted on every renewal: firing means no renewal for the renew deadline. */
  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      log.warn(
        { lease: this.name, renewDeadlineMs: this.timing.renewDeadlineMs },
        'could not renew the lease in time; stopping controllers',
      );
      void this.loseLeadership();
    }, this.timing.renewDeadlineMs);
  }

  private becomeLeader(): void {
    this.leading = true;
    log.info({ lease: this.name, identity: this.identity }, 'leader election lock obtained');
    for (const run of this.runs) this.startOne(run);
  }

  private startOne(run: () => StopFn): void {
    try {
      this.stops.push(run());
    } catch (err) {
      log.error({ lease: this.name, err }, 'controller failed to start');
    }
  }

  private async loseLeadership(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    clearTimeout(this.deadline);
    log.info({ lease: this.name }, 'leader election lock lost');
    for (const stop of this.stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error({ lease: this.name, err }, 'controller failed to stop');
      }
    }
  }

  private observe(lease: Lease): void {
    const key = `${lease.spec?.holderIdentity ?? ''}|${lease.spec?.renewTime ?? ''}|${lease.metadata.resourceVersion ?? ''}`;
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAt = Date.now();
    }
    this.last = lease;
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.timing.leaseDurationMs / 1000)),
      renewTime: microTime(now),
    };
    const current = await this.writer.get<Lease>(this.ref, this.callOptions);
    if (!current) {
      const body: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.name, namespace: this.namespace },
        spec: { ...spec, acquireTime: spec.renewTime!, leaseTransitions: 0 },
      };
      // A 409 means another replica wrote first: not an error, just not ours.
      const created = await unlessConflict(this.writer.create<Lease>(this.ref, body, this.callOptions));
      if (created) this.observe(created);
      return created !== undefined;
    }
    this.observe(current);
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.identity && this.observedAt + this.timing.leaseDurationMs > Date.now())
      return false;
    const next: Lease = {
      ...current,
      spec: {
        ...current.spec,
        ...spec,
        ...(holder !== this.identity
          ? { acquireTime: spec.renewTime!, leaseTransitions: (current.spec?.leaseTransitions ?? 0) + 1 }
          : {}),
      },
    };
    const updated = await unlessConflict(this.writer.update<Lease>(this.ref, next, this.callOptions));
    if (updated) this.observe(updated);
    return updated !== undefined;
  }

  /** Stops trying, stops the controllers, and releases the lease if this replica holds it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inflight;
    const wasLeading = this.leading;
    await this.loseLeadership();
    const last = this.last;
    if (!wasLeading || !last || last.spec?.holderIdentity !== this.identity) return;
    const now = microTime(Date.now());
    const released: Lease = {
      ...last,
      spec: { ...last.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
    };
    try {
      await this.writer.update<Lease>(this.ref, released, this.callOptions);
      log.info({ lease: this.name }, 'lease released');
    } catch (err) {
      log.warn({ lease: this.name, err: (err as Error).message }, 'could not release the lease; it expires on its own');
    }
  }
}

export class LeaseLeaderElector implements LeaderElector {
  readonly identity: string;
  private readonly timing: LeaderTiming;
  private readonly elections = new Map<string, LeaseElection>();
  private readonly writer: KubeWriter;
  private stopped = false;

  constructor(private readonly options: LeaseLeaderElectorOptions) {
    this.identity = options.identity || `${hostname()}-${randomBytes(4).toString('hex')}`;
    this.timing = { ...DEFAULT_LEADER_TIMING, ...options.timing };
    validateTiming(this.timing);
    this.writer = new KubeWriter(options.client);
  }

  runWhileLeader(lease: string, run: () => StopFn): void {
    if (this.stopped) throw new Error(`leader election for ${lease}: the elector is stopped`);
    let election = this.elections.get(lease);
    if (!election) {
      election = new LeaseElection(lease, this.writer, this.options.namespace, this.identity, this.timing);
      this.elections.set(lease, election);
      election.start();
    }
    election.add(run);
  }

  isLeader(lease: string): boolean {
    return this.elections.get(lease)?.leading ?? false;
  }

  /** Leadership per lease, for /debug. */
  status(): Record<string, boolean> {
    return Object.fromEntries([...this.elections].map(([name, e]) => [name, e.leading]));
  }

  /** The SIGTERM path: stop every controller and release every lease held. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.elections.values()].map((e) => e.stop()));
  }
}
