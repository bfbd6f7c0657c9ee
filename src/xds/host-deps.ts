// What the xDS server takes from the process that hosts it: its settings, where its metrics,
// service and /debug/syncz go, meshConfig changes (each one is a full push), whether the store has
// synced (streams wait for it), and shutdown.

import type { Registry } from 'prom-client';
import type { ServeEnv } from '../config/options';
import type { DebugRegistry, GrpcRegistrar, OnShutdown } from '../contract/host';
import type { MeshConfigSource } from '../mesh/types';

export interface XdsHostDeps {
  options: {
    env: Pick<
      ServeEnv,
      | 'PILOT_DEBOUNCE_AFTER'
      | 'PILOT_DEBOUNCE_MAX'
      | 'XDS_AUTH'
      | 'PILOT_ENABLE_XDS_IDENTITY_CHECK'
      | 'POD_NAME'
      | 'POD_NAMESPACE'
    >;
  };
  metrics: Registry;
  grpc: GrpcRegistrar;
  debug: DebugRegistry;
  mesh: Pick<MeshConfigSource, 'subscribe'>;
  /** New streams are refused until the store has synced (see XdsServerSettings.ready). */
  store: { hasSynced(): boolean };
  onShutdown: OnShutdown;
}
