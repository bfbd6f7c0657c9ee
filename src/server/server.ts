// Process wiring for `istiod-ts serve`: builds the store and its source, meshConfig, the
// listeners and the components, in that order. Shutdown drains them all under one deadline
// (--shutdownDuration, see shutdown.ts).

import * as http from 'node:http';
import type { ServeOptions } from '../config/options';
import { Tightened, tightenStateDir } from '../config/state-dir';
import { lockStateDir } from '../config/state-lock';
import { CA_KEY_FILE } from '../ca/roots/ca-secret-store';
import { TOKEN_KEY_FILE } from '../security/local-jwt';
import { errorMessage } from '../log/error-message';
import { logs, scopedLogger } from '../log/logger';
import { MemoryStore } from '../store/memory-store';
import { IgnoredObjects, registerIgnoredDebug } from '../store/ignored';
import { checkMeshConfigFile, createMeshConfigSource } from '../mesh/source';
import type { ServerContext } from './context';
import { DebugRouter } from './debug';
import { registerBuiltinDebug } from './debug-builtins';
import { MonitoringDebugAccess } from './debug-access';
import { registerDebugUi } from './debug-ui';
import { GrpcServers } from './grpc';
import { BoundListener, httpHandler, listen, monitoringHandler } from './http';
import { createMetricsRegistry } from './metrics';
import { EventLoopLiveness } from './liveness';
import { ReadinessTracker } from './readiness';
import { ServingCertHolder } from './serving-cert';
import { grpcServerOptions } from './grpc-options';
import { createSource } from './source';
import { startComponents } from './components';
import { startWebhookServer } from '../webhook';
import { drainWithin, ShutdownPart } from './shutdown';
import { ListenError } from '../net/listen-error';
import type { LeaderTiming } from '../store/kube/leader';

const log = scopedLogger('server');

export interface RunningServer {
  ctx: ServerContext;
  readiness: ReadinessTracker;
  /** Bound listeners by name: grpc, secure-grpc, http, monitoring, webhook. */
  listeners: Map<string, BoundListener>;
  /** Resolves when the TLS listeners (secure gRPC, webhook) are bound; they wait for the serving certificate. */
  secureStarted: Promise<void>;
  /**
   * Drains everything within --shutdownDuration and closes what is left at the deadline.
   * Resolves in both cases; rejects only if shutting down itself failed.
   */
  stop(): Promise<void>;
}

/**
 * What an in-process caller (a test running several replicas) may set that no flag or environment
 * variable reaches: operators get istiod's timings, tests cannot wait 30 s for a failover.
 */
export interface ServerSeams {
  /** Leader election timing in Kubernetes mode; default istiod's 30 s / 15 s / 7.5 s. */
  leaderTiming?: Partial<LeaderTiming>;
  /** Which monitoring-port callers skip /debug/ authentication; default loopback (tests stand in a remote caller). */
  debugCallerIsLocal?: (address: string | undefined) => boolean;
}

export async function startServer(options: ServeOptions, seams: ServerSeams = {}): Promise<RunningServer> {
  logs.configure(options.flags.log_output_level);
  logs.setFormat(options.flags.log_as_json ? 'json' : 'text');
  const { flags, env } = options;
  // A bad --meshConfig file is a usage error (exit 2, one line), found before anything is logged or created.
  checkMeshConfigFile(flags.meshConfig);
  let releaseStateDir: (() => void) | undefined;
  let tightened: Tightened[] = [];
  if (options.mode === 'local') {
    // The state folder holds the CA and token keys: nobody else may read them (config/state-dir.ts),
    // and one server at a time may write it (config/state-lock.ts). A folder that cannot be made is
    // a usage error, found before the first log line.
    tightened = tightenStateDir(flags.stateDir, [CA_KEY_FILE, TOKEN_KEY_FILE]);
    releaseStateDir = lockStateDir(flags.stateDir);
  }
  log.info(
    {
      mode: options.mode,
      configDir: flags.configDir || undefined,
      namespace: env.POD_NAMESPACE,
      revision: env.REVISION,
      cluster: env.CLUSTER_ID,
    },
    'starting',
  );
  for (const t of tightened)
    log.warn(t, 'state folder permissions were too open; tightened (the key may have been read by others)');
  // istiod's switches that a values file may carry over and istiod-ts does not honour (config/istiod-switches.ts).
  for (const u of options.unserved) log.warn({ env: u.name, value: u.value }, `${u.name} is not honoured: ${u.reason}`);

  const shutdownHooks: (() => void | Promise<void>)[] = [];
  const listeners = new Map<string, BoundListener>();
  const store = new MemoryStore();
  const readiness = new ReadinessTracker();
  const metrics = createMetricsRegistry();
  const debug = new DebugRouter();
  const servingCerts = new ServingCertHolder();
  // istiod's rules for /debug/ on the monitoring port: loopback, or a system-namespace caller.
  const monitoringDebug = new MonitoringDebugAccess(env.POD_NAMESPACE, metrics, seams.debugCallerIsLocal);
  // ENABLE_DEBUG_ON_HTTP=false, as istiod: no /debug/ on either HTTP listener.
  const debugOnHttp = env.ENABLE_DEBUG_ON_HTTP;

  const mesh = await createMeshConfigSource({
    file: flags.meshConfig,
    mode: options.mode,
    podNamespace: env.POD_NAMESPACE,
    revision: env.REVISION,
    store,
    sharedConfigMap: env.SHARED_MESH_CONFIG || undefined,
  });
  shutdownHooks.push(() => mesh.stop());
  if (releaseStateDir) shutdownHooks.push(releaseStateDir);
  // The Kubernetes source reads meshConfig's discoverySelectors, so meshConfig comes first.
  // One list of objects the server does not act on, whoever finds them (see store/ignored.ts).
  const ignored = new IgnoredObjects({ metrics });
  registerIgnoredDebug(debug, ignored);
  const { source, leader, kube, reachable, clusters, remoteElector } = await createSource(options, {
    store,
    mesh,
    metrics,
    debug,
    ignored,
    readiness,
    ...(seams.leaderTiming ? { leaderTiming: seams.leaderTiming } : {}),
  });

  const grpcServers = new GrpcServers(flags.grpcAddr, flags.secureGRPCAddr, grpcServerOptions(options));
  const ctx: ServerContext = {
    options,
    store,
    mesh,
    metrics,
    grpc: grpcServers,
    readiness,
    debug,
    servingCerts,
    leader,
    onShutdown: (hook) => shutdownHooks.push(hook),
  };
  registerBuiltinDebug(debug, store, mesh);
  registerDebugUi(ctx);

  // The HTTP listeners come up first so /ready can say what is still missing while we sync.
  const storeReady = readiness.register('store', () => store.unsyncedParts());
  if (flags.httpAddr) {
    const liveness = new EventLoopLiveness();
    liveness.start();
    shutdownHooks.push(() => liveness.stop());
    const server = http.createServer(
      httpHandler({
        readiness,
        liveness,
        debug: debugOnHttp ? debug : undefined,
        allowRemoteDebug: flags.debugAllowRemote,
      }),
    );
    listeners.set('http', await listen('http', server, flags.httpAddr, { metrics }));
  }
  if (flags.monitoringAddr) {
    listeners.set(
      'monitoring',
      await listen(
        'monitoring',
        http.createServer(
          monitoringHandler(metrics, debugOnHttp ? { router: debug, access: monitoringDebug } : undefined),
        ),
        flags.monitoringAddr,
        { metrics },
      ),
    );
  }

  // Kubernetes mode: the components read from the API server as they start (the CA its root), so
  // they wait for it to answer; meanwhile /ready says why the server is not ready.
  if (reachable) await reachable;
  const components = await startComponents(ctx, kube, ignored, clusters, remoteElector);
  // Remote /debug/ callers on the monitoring port authenticate as xDS and CA callers do.
  monitoringDebug.setAuthenticator(components.authenticator);

  await source.start();
  void store
    .whenSynced()
    .then(() => {
      storeReady(true);
      log.info('store synced');
    })
    .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'marking the store synced failed'));

  const plain = await grpcServers.startPlaintext();
  if (plain) listeners.set('grpc', plain);
  const secureReady = flags.secureGRPCAddr ? readiness.register('secure-grpc') : undefined;
  const secureStarted = (async () => {
    // istiod opens 15012 once its caches are in and its certificate exists.
    await store.whenSynced();
    const secure = await grpcServers.startSecure(servingCerts);
    if (secure) listeners.set('secure-grpc', secure);
    secureReady?.(true);
  })();
  // A port that cannot bind is the caller's to report (one line naming the flag); anything else is logged here.
  secureStarted.catch((err: unknown) => {
    if (!(err instanceof ListenError)) log.error({ err }, 'secure gRPC listener failed');
  });
  // The webhook listens once the CA has issued the serving certificate.
  const webhookStarted = startWebhookServer(ctx).then((h) => {
    // An enabled webhook has its bound address and port; a disabled one has neither.
    if (h.enabled && h.address !== undefined && h.port !== undefined)
      listeners.set('webhook', {
        name: 'webhook',
        address: h.address,
        port: h.port,
        close: (deadlineMs) => h.close(deadlineMs),
        forceClose: () => h.forceClose(),
      });
  });
  webhookStarted.catch((err: unknown) => {
    if (!(err instanceof ListenError)) log.error({ err }, 'webhook listener failed');
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const deadlineMs = flags.shutdownDuration;
      log.info({ deadlineMs }, 'shutting down');
      grpcServers.stopBinding();
      const hooks = shutdownHooks.splice(0).reverse();
      const parts: ShutdownPart[] = [
        // Listeners first: they stop accepting and send GOAWAY before the xDS server ends its
        // streams, so a ztunnel that reconnects reaches another replica, not this one.
        ...[...listeners.values()].map((l) => ({
          name: l.name,
          drain: () => l.close(deadlineMs),
          force: l.forceClose,
        })),
        // Hooks start in reverse order of registration but do not wait for each other: one
        // that waits on a slow client (a webhook request sent half-way) must not keep the xDS
        // server from ending its streams inside the drain window.
        {
          name: 'components',
          drain: () =>
            Promise.all(
              hooks.map(async (hook) => {
                try {
                  await hook();
                } catch (err) {
                  log.warn({ err }, 'shutdown hook failed');
                }
              }),
            ),
        },
        // Released at once, so another replica can take the leases without waiting for them to expire.
        { name: 'leader election', drain: () => leader.stop() },
        { name: 'config source', drain: () => source.stop() },
      ];
      const { forced } = await drainWithin(parts, deadlineMs, log);
      log.info({ forced }, 'stopped');
    })());

  return {
    ctx,
    readiness,
    listeners,
    secureStarted: Promise.all([secureStarted, webhookStarted]).then(() => undefined),
    stop,
  };
}
