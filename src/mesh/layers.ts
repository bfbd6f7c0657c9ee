// Where meshConfig layers come from: a file (watched, including Kubernetes' symlink-swapping
// ConfigMap mounts) or a ConfigMap key in the object store (followed through store events).

import { FSWatcher, promises as fs, readFileSync, watch } from 'node:fs';
import * as path from 'node:path';
import { scopedLogger } from '../log/logger';
import type { ObjectStore } from '../store/types';
import type { MeshLayer } from './build';

const log = scopedLogger('mesh');

/** How often the mesh file is re-read even without a watch event (missed events, odd mounts). */
export const MESH_FILE_POLL_MS = 5_000;
/** Quiet window after a watch event; a ConfigMap mount update is several events in a row. */
export const MESH_FILE_DEBOUNCE_MS = 50;
/** The ConfigMap key holding meshConfig, as istiod reads it. */
export const MESH_CONFIG_KEY = 'mesh';

export interface LayerSource {
  /** The layer as it is now. */
  read(): MeshLayer;
  /** Calls `changed` whenever the layer may have changed; returns nothing until stop(). */
  start(changed: () => void): void;
  stop(): void;
}

/** ConfigMap `istio`, or `istio-<rev>` for a revisioned control plane. */
export function meshConfigMapName(revision: string): string {
  return revision === '' || revision === 'default' ? 'istio' : `istio-${revision}`;
}

export class FileLayer implements LayerSource {
  private text: string | undefined;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private readFailed = false;

  constructor(
    private readonly file: string,
    private readonly pollMs = MESH_FILE_POLL_MS,
    private readonly debounceMs = MESH_FILE_DEBOUNCE_MS,
  ) {
    try {
      this.text = readFileSync(file, 'utf8');
    } catch (err) {
      // It existed a moment ago; the watch or the poll will pick it up when it is back.
      log.warn({ err, file }, 'cannot read the meshConfig file; using the defaults until it can be read');
      this.readFailed = true;
    }
  }

  read(): MeshLayer {
    return { source: this.file, text: this.text };
  }

  start(changed: () => void): void {
    const reread = async () => {
      try {
        const text = await fs.readFile(this.file, 'utf8');
        this.readFailed = false;
        if (text === this.text) return;
        this.text = text;
        changed();
      } catch (err) {
        // A file that vanished mid-swap or for good: keep the last text, say so once.
        if (!this.readFailed)
          log.warn({ err, file: this.file }, 'cannot read the meshConfig file; keeping the last config');
        this.readFailed = true;
      }
    };
    // Watch the folder, not the file: a ConfigMap mount replaces the "..data" symlink, which a
    // watch on the file itself would never see.
    try {
      this.watcher = watch(path.dirname(this.file), () => {
        if (this.debounce) clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void reread(), this.debounceMs);
      });
      this.watcher.on('error', (err) =>
        log.warn({ err, file: this.file }, 'watching the meshConfig folder failed; polling only'),
      );
    } catch (err) {
      log.warn({ err, file: this.file }, 'cannot watch the meshConfig folder; polling only');
    }
    this.poll = setInterval(() => void reread(), this.pollMs);
    this.poll.unref();
  }

  stop(): void {
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
    if (this.debounce) clearTimeout(this.debounce);
  }
}

export class ConfigMapLayer implements LayerSource {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly namespace: string,
    private readonly name: string,
    private readonly key = MESH_CONFIG_KEY,
  ) {}

  get source(): string {
    return `ConfigMap ${this.namespace}/${this.name} key ${this.key}`;
  }

  read(): MeshLayer {
    // A missing ConfigMap or key means "nothing from this layer", as in istiod.
    const text = this.store.get('ConfigMap', this.namespace, this.name)?.data?.[this.key];
    return { source: this.source, text };
  }

  start(changed: () => void): void {
    this.unsubscribe = this.store.subscribe((events) => {
      const ours = events.some(
        (e) =>
          e.kind === 'ConfigMap' &&
          e.object.metadata.namespace === this.namespace &&
          e.object.metadata.name === this.name,
      );
      if (ours) changed();
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }
}
