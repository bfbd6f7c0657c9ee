// Picks the object source and the leader elector for the mode: a folder in local mode, the
// Kubernetes API otherwise.

import type { KubeConfig } from '@kubernetes/client-node';
import { Counter, Gauge, Registry } from 'prom-client';
import type { ServeOptions } from '../config/options';
import { LocalSource } from '../store/local/local-source';
import type { MemoryStore } from '../store/memory-store';
import type { ConfigSource } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import type { DebugRegistry, LeaderElector } from './context';
import { SoleLeader } from './leader';

export interface SourceAndLeader {
  source: ConfigSource;
  leader: LeaderElector & { stop(): Promise<void> };
  /** Kubernetes mode: the client configuration the components' own API calls use. */
  kubeConfig?: KubeConfig;
}

export interface SourceDeps {
  store: MemoryStore;
  mesh: MeshConfigSource;
  metrics: Registry;
  debug: DebugRegistry;
}

function localSource(options: ServeOptions, deps: SourceDeps): SourceAndLeader {
  const errors = new Gauge({ name: 'istiod_ts_local_config_errors', help: 'Files under --configDir that do not parse', registers: [deps.metrics] });
  const objects = new Gauge({ name: 'istiod_ts_local_config_objects', help: 'Objects loaded from --configDir', registers: [deps.metrics] });
  const events = new Counter({ name: 'istiod_ts_local_config_events_total', help: 'Store events produced by --configDir changes', labelNames: ['type'], registers: [deps.metrics] });
  const source = new LocalSource({
    dir: options.flags.configDir,
    writer: deps.store,
    onReload: (stats) => {
      errors.set(stats.errors);
      objects.set(stats.objects);
      for (const type of ['add', 'update', 'delete'] as const) if (stats.events[type]) events.inc({ type }, stats.events[type]);
    },
  });
  deps.debug.add('localconfig', 'files under --configDir that do not parse, with file, line and reason', () => ({
    body: { dir: options.flags.configDir, errors: source.errors() },
  }));
  return { source, leader: new SoleLeader() };
}

export async function createSource(options: ServeOptions, deps: SourceDeps): Promise<SourceAndLeader> {
  if (options.mode === 'local') return localSource(options, deps);
  throw new Error('Kubernetes mode is not available in this build; run local mode with --configDir DIR');
}
