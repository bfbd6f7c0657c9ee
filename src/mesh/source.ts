// The effective meshConfig, kept current. Source, as istiod picks it: the --meshConfig file if it
// exists; else in Kubernetes mode ConfigMap istio[-<rev>] key "mesh" in POD_NAMESPACE; else the
// defaults. A valid change is applied live and announced; an invalid one is logged with its
// reason and the last good config stays, or the defaults when no valid config was ever loaded
// (the log line says which). istiod's warnings and fields this version does not know are logged
// once each, not on every reload. An invalid file at start is a usage error (checkMeshConfigFile).

import { existsSync, readFileSync } from 'node:fs';
import { UsageError } from '../config/settings';
import { scopedLogger } from '../log/logger';
import { canonicalJson } from '../store/local/canonical';
import type { ObjectStore } from '../store/types';
import { applyMeshLayer, buildMeshConfig, type MeshBuild } from './build';
import { defaultMeshConfig } from './defaults';
import { ConfigMapLayer, FileLayer, LayerSource, meshConfigMapName } from './layers';
import { MeshConfigError } from './parse';
import type { MeshConfig, MeshConfigSource } from './types';

const log = scopedLogger('mesh');

type Listener = (mesh: MeshConfig, previous: MeshConfig) => void;

/**
 * Warnings and unknown fields already logged, remembered so that a reload does not repeat them.
 * Past this many distinct ones (a config churning through typos), the memory starts over, so a
 * finding may be logged again rather than memory growing without bound.
 */
export const MAX_REMEMBERED_MESH_NOTES = 1024;

/** Unknown field paths listed in one log line; the line gives the count of the rest. */
export const MAX_UNKNOWN_FIELDS_PER_LINE = 20;

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
  /** Whether the config in force came from a source's text (false: the defaults, nothing valid seen). */
  private fromSource = false;
  private readonly noted = new Set<string>();
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
    this.logNotes(result);
    if (!result.ok) {
      // The same refusal again (a re-read that changed nothing) was already said.
      if (this.error === result.error.message) return;
      this.error = result.error.message;
      const fields = { source: result.error.source, issues: result.error.issues };
      if (this.fromSource) log.warn(fields, `invalid meshConfig, keeping the last good one: ${result.error.message}`);
      else
        log.warn(
          fields,
          `invalid meshConfig and no valid one was loaded from ${this.origin} yet, so the built-in defaults are in force: ${result.error.message}`,
        );
      return;
    }
    this.fromSource = result.fromSource;
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

  /** Whether `key` is new; remembers it (see MAX_REMEMBERED_MESH_NOTES). */
  private firstTime(key: string): boolean {
    if (this.noted.has(key)) return false;
    if (this.noted.size >= MAX_REMEMBERED_MESH_NOTES) this.noted.clear();
    this.noted.add(key);
    return true;
  }

  /** Logs each warning and each unknown field path once for the life of the watcher. */
  private logNotes(result: MeshBuild): void {
    for (const w of result.notes.warnings)
      if (this.firstTime(`warning\0${w.field}\0${w.message}`))
        log.warn(
          { source: w.source, field: w.field },
          `meshConfig warning: ${w.field ? `${w.field}: ` : ''}${w.message}`,
        );
    const fresh = result.notes.unknown.filter((u) => this.firstTime(`unknown\0${u.field}`));
    if (fresh.length === 0) return;
    const shown = fresh.slice(0, MAX_UNKNOWN_FIELDS_PER_LINE).map((u) => u.field);
    const more = fresh.length - shown.length;
    log.warn(
      { source: fresh[0]?.source, fields: shown },
      `meshConfig has fields this version does not know; they are kept but have no effect (a typo?): ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`,
    );
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

/**
 * The start-up check of --meshConfig: a file that exists must be readable and valid on its own,
 * over the defaults. Throws UsageError with one line naming the file and the fields, so the CLI
 * exits 2 before anything is created. A file that does not exist is not an error (istiod then
 * reads the ConfigMap, or runs on the defaults).
 */
export function checkMeshConfigFile(file: string): void {
  if (!file || !existsSync(file)) return;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`invalid value for --meshConfig: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    applyMeshLayer(defaultMeshConfig(), { source: file, text });
  } catch (err) {
    if (err instanceof MeshConfigError) throw new UsageError(`invalid value for --meshConfig: ${err.message}`);
    throw err;
  }
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
