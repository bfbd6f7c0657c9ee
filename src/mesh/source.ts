// The effective meshConfig, kept current. Source, as istiod picks it: the --meshConfig file if it
// exists; else in Kubernetes mode ConfigMap istio[-<rev>] key "mesh" in POD_NAMESPACE; else the
// defaults. A valid change is applied live and announced; an invalid one is logged with its
// reason and the last good config stays (the defaults if there never was a good one).

import { existsSync } from 'node:fs';
import { scopedLogger } from '../log/logger';
import { canonicalJson } from '../store/local/canonical';
import type { ObjectStore } from '../store/types';
import { buildMeshConfig } from './build';
import { defaultMeshConfig } from './defaults';
import { ConfigMapLayer, FileLayer, LayerSource, meshConfigMapName } from './layers';
import type { MeshConfig, MeshConfigSource } from './types';

const log = scopedLogger('mesh');

type Listener = (mesh: MeshConfig, previous: MeshConfig) => void;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export class MeshWatcher implements MeshConfigSource {
  private mesh: MeshConfig = deepFreeze(defaultMeshConfig());
  private fingerprint = canonicalJson(this.mesh);
  private readonly listeners = new Set<Listener>();
  private error: string | undefined;
  private stopped = false;
  /** Resolves once the first real load happened (for a ConfigMap source: after the store synced). */
  readonly ready: Promise<void>;

  constructor(
    private readonly layers: readonly LayerSource[],
    /** Says where the config comes from, for logs and /debug. */
    readonly origin: string,
    waitFor: Promise<void> = Promise.resolve(),
  ) {
    this.refresh();
    for (const layer of layers) layer.start(() => this.refresh());
    this.ready = waitFor.then(() => {
      if (!this.stopped) this.refresh();
    });
  }

  current(): MeshConfig {
    return this.mesh;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The reason the latest change was refused, while the last good config is in force. */
  lastError(): string | undefined {
    return this.error;
  }

  stop(): void {
    this.stopped = true;
    for (const layer of this.layers) layer.stop();
    this.listeners.clear();
  }

  /** Re-reads every layer and applies the result if it is valid and different. */
  refresh(): void {
    if (this.stopped) return;
    const result = buildMeshConfig(this.layers.map((l) => l.read()));
    if (!result.ok) {
      this.error = result.error.message;
      log.warn(
        { source: result.error.source, issues: result.error.issues },
        `invalid meshConfig, keeping the last good one: ${result.error.message}`,
      );
      return;
    }
    for (const skipped of result.skipped) {
      log.warn(
        { source: skipped.source, issues: skipped.issues },
        `invalid meshConfig layer ignored: ${skipped.message}`,
      );
    }
    this.error = result.skipped.length > 0 ? result.skipped.map((e) => e.message).join('; ') : undefined;
    const fingerprint = canonicalJson(result.mesh);
    if (fingerprint === this.fingerprint) return;
    const previous = this.mesh;
    this.mesh = deepFreeze(result.mesh);
    this.fingerprint = fingerprint;
    log.info(
      { origin: this.origin, trustDomain: this.mesh.trustDomain, rootNamespace: this.mesh.rootNamespace },
      'meshConfig applied',
    );
    for (const listener of this.listeners) {
      try {
        listener(this.mesh, previous);
      } catch (err) {
        log.error({ err }, 'meshConfig subscriber failed');
      }
    }
  }
}

export interface MeshSourceOptions {
  /** The --meshConfig path; used when it exists. */
  file: string;
  mode: 'local' | 'kubernetes';
  podNamespace: string;
  revision: string;
  store: ObjectStore;
  /** SHARED_MESH_CONFIG: a ConfigMap in podNamespace applied between the defaults and the primary source. */
  sharedConfigMap?: string;
  pollIntervalMs?: number;
  debounceMs?: number;
}

export function createMeshConfigSource(opts: MeshSourceOptions): Promise<MeshWatcher> {
  const layers: LayerSource[] = [];
  let waitFor = Promise.resolve();
  const needsStore = () => {
    waitFor = opts.store.whenSynced();
  };
  if (opts.sharedConfigMap && opts.mode === 'kubernetes') {
    layers.push(new ConfigMapLayer(opts.store, opts.podNamespace, opts.sharedConfigMap));
    needsStore();
  }
  let origin: string;
  if (opts.file && existsSync(opts.file)) {
    layers.push(new FileLayer(opts.file, opts.pollIntervalMs, opts.debounceMs));
    origin = `file ${opts.file}`;
  } else if (opts.mode === 'kubernetes') {
    const name = meshConfigMapName(opts.revision);
    layers.push(new ConfigMapLayer(opts.store, opts.podNamespace, name));
    origin = `ConfigMap ${opts.podNamespace}/${name}`;
    needsStore();
  } else {
    origin = 'defaults';
  }
  const watcher = new MeshWatcher(layers, origin, waitFor);
  log.info({ origin }, 'meshConfig source');
  return Promise.resolve(watcher);
}
