// The Delta ADS server: accepts streams, turns the cache's change sets into debounced pushes and
// fans each push out to every stream. It sees only the ResourceCache interface, never Kubernetes.

import * as grpc from '@grpc/grpc-js';
import { Counter, type Registry } from 'prom-client';
import { scopedLogger } from '../log/logger';
import type { CallAuthenticator } from '../security/identity';
import type { GrpcPort } from '../contract/host';
import type { XdsHostDeps } from './host-deps';
import { GrpcHookFallbacks } from './grpc/hooks';
import { ResourceCache, XDS_TYPE_ORDER } from '../contract/xds-resources';
import { clientText } from './wire/client-limits';
import { Clock, DebounceSettings, PushDebouncer, PushRequest, realClock } from './protocol/debounce';
import { DeltaCall, DeltaStream } from './protocol/delta-stream';
import { DEFAULT_FLOW_CONTROL, DrainMonitor, FlowControlSettings } from './protocol/drain';
import { XdsMetrics, metricType } from './protocol/metrics';
import { DELTA_METHOD, SOTW_METHOD, adsServiceDefinition } from './grpc/proto';
import { FullSyncGate, PushBatch, SnapshotCache } from './protocol/push';
import { PushStatusRecorder } from './debug/push-status';
import { SotwServer, SotwSettings } from './debug/sotw';
import type { SotwCall, SotwOutcome } from './debug/sotw-stream';
import { ControlPlaneBuild, controlPlaneIdentifier } from './debug/sotw-syncz';
import { SyncStatusEntry, Syncz, syncStatusEntries, syncz } from './debug/syncz';
import { CacheDigests } from './wire/version-digest';

const log = scopedLogger('xds');

/** istiod's answer to a stream opened before its caches have synced (codes.Unavailable): the client retries. */
export const NOT_READY_MESSAGE = 'server is not ready to serve discovery information';

export interface XdsServerSettings {
  debounce: DebounceSettings;
  /** XDS_AUTH: authenticate every stream. */
  auth: boolean;
  /** PILOT_ENABLE_XDS_IDENTITY_CHECK. */
  identityCheck: boolean;
  /** When a client that stops reading is cut (drain.ts); tests shorten it. */
  flowControl?: Partial<FlowControlSettings>;
  /**
   * Whether the cache holds the whole mesh (the store has synced). Until then every new stream is
   * refused with UNAVAILABLE: an incomplete view would tell ztunnel to remove what is only not
   * loaded yet. Absent: always ready.
   */
  ready?: () => boolean;
  /** istioctl's debug queries over StreamAggregatedResources; defaults for tests. */
  debug?: Partial<Pick<SotwSettings, 'systemNamespace' | 'controlPlane' | 'writeTimeoutMs' | 'maxStreams' | 'count'>>;
  /**
   * Destroys the connection a call came on, by the call's peer (GrpcRegistrar.closeConnection):
   * how a client that stops reading is cut when its stream cannot be reset. Absent: nothing more
   * than ending the stream (tests that serve on a bare grpc.Server).
   */
  closeConnection?: (peer: string) => boolean;
  /** Where lost reaches past grpc-js are counted; the log alone when absent. */
  registry?: Registry;
}

/** The system namespace when none is given (POD_NAMESPACE's default). */
export const DEFAULT_SYSTEM_NAMESPACE = 'istio-system';

export class XdsServer {
  readonly streams = new Set<DeltaStream>();
  /** The last pushes, for /debug/push_status. */
  readonly pushStatus = new PushStatusRecorder();
  /** Streams accepted but not ready yet (authenticating, or waiting for their first request). */
  private readonly starting = new Set<DeltaStream>();
  private readonly debouncer: PushDebouncer;
  private readonly unsubscribe: () => void;
  private readonly snapshots: SnapshotCache;
  private readonly fullSyncs = new FullSyncGate();
  private readonly digests: CacheDigests;
  private readonly drains: DrainMonitor;
  private readonly sotw: SotwServer;
  private readonly hooks: GrpcHookFallbacks;
  private readonly closeConnection: (peer: string) => boolean;
  private closed = false;

  constructor(
    private readonly cache: ResourceCache,
    private readonly authenticator: CallAuthenticator,
    private readonly settings: XdsServerSettings,
    private readonly metrics: XdsMetrics,
    private readonly clock: Clock = realClock,
  ) {
    this.debouncer = new PushDebouncer(settings.debounce, (req) => this.push(req), clock);
    this.snapshots = new SnapshotCache(cache);
    this.drains = new DrainMonitor({ ...DEFAULT_FLOW_CONTROL, ...settings.flowControl }, clock);
    this.digests = new CacheDigests(cache, XDS_TYPE_ORDER);
    this.hooks = new GrpcHookFallbacks(log, settings.registry);
    this.closeConnection = (peer) => {
      const closed = settings.closeConnection?.(peer) ?? false;
      if (!closed)
        log.warn({ peer }, 'the connection of a stream that cannot be reset is not known; the stream is only ended');
      return closed;
    };
    const debug = settings.debug ?? {};
    this.sotw = new SotwServer(
      {
        streams: () => this.streams,
        authenticator,
        systemNamespace: debug.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE,
        controlPlane:
          debug.controlPlane ?? controlPlaneIdentifier('', { version: 'unknown', runtime: process.version }),
        log,
        count: debug.count ?? (() => undefined),
        hooks: this.hooks,
        closeConnection: this.closeConnection,
        ...(debug.writeTimeoutMs !== undefined ? { writeTimeoutMs: debug.writeTimeoutMs } : {}),
        ...(debug.maxStreams !== undefined ? { maxStreams: debug.maxStreams } : {}),
      },
      log,
    );
    this.unsubscribe = cache.subscribe((changes) => {
      this.snapshots.invalidate();
      this.digests.apply(changes);
      this.debouncer.changed(changes);
    });
  }

  /**
   * The grpc-js implementation object for adsServiceDefinition() on one port: debug types are
   * answered only on the TLS port, known from where the implementation is registered.
   */
  implementation(port: GrpcPort): grpc.UntypedServiceImplementation {
    const encrypted = port === 'secure';
    return {
      [DELTA_METHOD]: (call: DeltaCall) => this.accept(call),
      [SOTW_METHOD]: (call: SotwCall) => this.sotw.accept(call, encrypted),
    };
  }

  /** Resends every subscribed resource to every client (meshConfig changed). */
  fullPush(): void {
    this.debouncer.fullPush();
  }

  /** Ends every stream with OK so clients reconnect (to another replica when this one stops). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.debouncer.close();
    this.sotw.close();
    // The DrainMonitor keeps watching: while ended streams drain, one that stops reading is still cut.
    for (const s of [...this.streams, ...this.starting]) s.end();
  }

  debugSyncz(): Syncz {
    const gate = this.fullSyncs;
    return syncz(this.streams, { active: gate.active, queued: gate.queued, limit: gate.limit, stalled: gate.stalled });
  }

  /** Open StreamAggregatedResources (debug) streams. */
  sotwStreamCount(): number {
    return this.sotw.streams.size;
  }

  /** istiod's /debug/syncz: every proxy's sync state, or those of one namespace. */
  debugSyncStatus(namespace = ''): SyncStatusEntry[] {
    return syncStatusEntries(this.streams, namespace);
  }

  private accept(call: DeltaCall): void {
    if (this.closed) {
      call.end();
      return;
    }
    if (this.settings.ready && !this.settings.ready()) {
      log.debug({ peer: call.getPeer() }, 'xDS stream refused: the store has not synced');
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: NOT_READY_MESSAGE });
      return;
    }
    const stream = new DeltaStream(call, {
      cache: this.cache,
      authenticator: this.settings.auth ? this.authenticator : undefined,
      identityCheck: this.settings.identityCheck,
      metrics: this.metrics,
      clock: this.clock,
      log,
      snapshots: this.snapshots,
      fullSyncs: this.fullSyncs,
      drains: this.drains,
      digests: this.digests,
      hooks: this.hooks,
      closeConnection: this.closeConnection,
      onReady: (s) => {
        this.starting.delete(s);
        // close() ended every starting stream; should one still get here, it is ended as the others.
        if (this.closed) s.end();
        else this.streams.add(s);
      },
      onClose: (s) => {
        this.starting.delete(s);
        if (this.streams.delete(s)) log.info({ stream: s.id, node: clientText(s.node?.id) }, 'xDS stream closed');
      },
    });
    this.starting.add(stream);
    stream.start();
  }

  private push(req: PushRequest): void {
    const started = this.clock.now();
    const batch = new PushBatch(req, this.cache);
    for (const s of this.streams) s.enqueue(batch);
    batch.finish();
    const seconds = (this.clock.now() - started) / 1000;
    this.pushStatus.record(req, started, seconds * 1000, this.streams.size, this.cache);
    const types = req.full ? ['full'] : [...req.changes.keys()].map(metricType);
    for (const type of new Set(types)) this.metrics.pushTime.observe({ type }, seconds);
    log.debug(
      {
        streams: this.streams.size,
        full: req.full,
        changed: Object.fromEntries([...req.changes].map(([t, n]) => [metricType(t), n.size])),
        ms: seconds * 1000,
      },
      'push',
    );
  }
}

export interface XdsServerHandle {
  server: XdsServer;
  close(): void;
}

/** Registers the ADS service on both gRPC ports, its metrics and /debug/ztunnels, and ties it to meshConfig and shutdown. */
export function startXdsServer(
  ctx: XdsHostDeps,
  cache: ResourceCache,
  authenticator: CallAuthenticator,
  build: ControlPlaneBuild = { version: 'unknown', runtime: process.version },
): XdsServerHandle {
  const env = ctx.options.env;
  const debugRequests = new Counter({
    name: 'istiod_ts_xds_debug_requests_total',
    help: "istioctl's State-of-the-World debug requests by outcome (answered, unauthenticated, invalid, refused_type, write_timeout, refused_streams)",
    labelNames: ['outcome'],
    registers: [ctx.metrics],
  });
  const server = new XdsServer(
    cache,
    authenticator,
    {
      debounce: { after: env.PILOT_DEBOUNCE_AFTER, max: env.PILOT_DEBOUNCE_MAX },
      auth: env.XDS_AUTH,
      identityCheck: env.PILOT_ENABLE_XDS_IDENTITY_CHECK,
      ready: () => ctx.store.hasSynced(),
      debug: {
        systemNamespace: env.POD_NAMESPACE,
        controlPlane: controlPlaneIdentifier(env.POD_NAME, build),
        count: (outcome: SotwOutcome) => debugRequests.inc({ outcome }),
      },
      closeConnection: (peer) => ctx.grpc.closeConnection(peer),
      registry: ctx.metrics,
    },
    new XdsMetrics(ctx.metrics),
  );
  ctx.grpc.addService(adsServiceDefinition(), (port) => server.implementation(port), 'both');
  ctx.debug.add(
    'syncz',
    "istiod's sync status per proxy: nonce sent and ACKed, send time, last error and status per type (?namespace=)",
    (req) => ({ body: server.debugSyncStatus(req.query.get('namespace') ?? '') }),
  );
  ctx.debug.add(
    'ztunnels',
    'connected xDS clients: node, identity, subscriptions, last nonce, ACK/NACK, pending names',
    () => ({
      body: server.debugSyncz(),
    }),
  );
  const unsubscribeMesh = ctx.mesh.subscribe(() => server.fullPush());
  ctx.onShutdown(() => {
    unsubscribeMesh();
    server.close();
  });
  return { server, close: () => server.close() };
}
