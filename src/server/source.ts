// Picks the object source and the leader elector for the mode: a folder in local mode, the
// Kubernetes API otherwise.

import type { ServeOptions } from '../config/options';
import { LocalSource } from '../store/local/local-source';
import type { MemoryStore } from '../store/memory-store';
import type { ConfigSource } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import type { LeaderElector } from './context';
import { SoleLeader } from './leader';

export interface SourceAndLeader {
  source: ConfigSource;
  leader: LeaderElector & { stop(): Promise<void> };
}

export async function createSource(options: ServeOptions, store: MemoryStore, _mesh: MeshConfigSource): Promise<SourceAndLeader> {
  if (options.mode === 'local') {
    return { source: new LocalSource({ dir: options.flags.configDir, writer: store }), leader: new SoleLeader() };
  }
  throw new Error('Kubernetes mode is not available in this build; run local mode with --configDir DIR');
}
