// Picks the object source and the leader elector for the mode: a folder in local mode, the
// Kubernetes API otherwise.

import { Counter, Gauge, Registry } from 'prom-client';
import type { ServeOptions } from '../config/options';
import { LocalSource } from '../store/local/local-source';
import { connectKubernetes, KubeClient } from '../store/kube';
import type { MemoryStore } from '../store/memory-store';
import type { IgnoredObjects } from '../store/ignored';
import type { ConfigSource } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import type { DebugRegistry } from '../contract/host';
import type { LeaderElector } from '../contract/leader';
import { SoleLeader } from './leader';

export interface SourceAndLeader {
  source: ConfigSource;
  leader: LeaderElector & { stop(): Promise<void> };
  /** Kubernetes mode: the client the components' own API calls use. */
  kube?: KubeClient;
}

export interface SourceDeps {
  store: MemoryStore;
  mesh: MeshConfigSource;
  metrics: Registry;
  debug: DebugRegistry;
  /** Objects the server does not act on; local mode reports the kinds it does not use here. */
  ignored?: IgnoredObjects;
}

function localSource(options: ServeOptions, deps: SourceDeps): SourceAndLeader {
  const errors = new Gauge({
    name: 'istiod_ts_local_config_errors',
    help: 'Files under --configDir that cannot be loaded, plus ignored duplicates',
    registers: [deps.metrics],
  });
  const objects = new Gauge({
    name: 'istiod_ts_local_config_objects',
    help: 'Objects loaded from --configDir',
    registers: [deps.metrics],
  });
  const events = new Counter({
    name: 'istiod_ts_local_config_events_total',
    help: 'Store events produced by --configDir changes',
    labelNames: ['type'],
    registers: [deps.metrics],
  });
  const source = new LocalSource({
    dir: options.flags.configDir,
    writer: deps.store,
    ...(deps.ignored ? { ignored: deps.ignored } : {}),
    onReload: (stats) => {
      errors.set(stats.errors);
      objects.set(stats.objects);
      for (const type of ['add', 'update', 'delete'] as const)
        if (stats.events[type]) events.inc({ type }, stats.events[type]);
    },
  });
  deps.debug.add(
    'localconfig',
    'files under --configDir that cannot be loaded (parse errors, files past a limit, parser time or heap limits) and ignored duplicates, with file, line and reason',
    () => ({
      body: { dir: options.flags.configDir, errors: source.errors() },
    }),
  );
  return { source, leader: new SoleLeader() };
}

async function kubernetesSource(options: ServeOptions, deps: SourceDeps): Promise<SourceAndLeader> {
  // Throws KubeUnreachableError naming the server and pointing at --configDir when no cluster answers.
  const kube = await connectKubernetes({
    kubeconfig: options.flags.kubeconfig,
    systemNamespace: options.env.POD_NAMESPACE,
    podName: options.env.POD_NAME,
    revision: options.env.REVISION,
    store: deps.store,
    mesh: deps.mesh,
  });
  deps.debug.add('kubernetes', 'watched kinds: synced, objects, resourceVersion, failures, missing CRDs', () => ({
    body: kube.source.status(),
  }));
  return { source: kube.source, leader: kube.leader, kube: kube.client };
}

export async function createSource(options: ServeOptions, deps: SourceDeps): Promise<SourceAndLeader> {
  return options.mode === 'local' ? localSource(options, deps) : kubernetesSource(options, deps);
}
