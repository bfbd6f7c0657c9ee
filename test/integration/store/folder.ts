// Helpers for tests that drive the local source through a real temporary folder.

import { mkdtempSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { MemoryStore } from '../../../src/store/memory-store';
import type { StoreEvent } from '../../../src/store/types';

export const WAIT_LIMIT_MS = 10_000;

export class TempFolder {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-local-'));

  /** Writes through a hidden temporary file and a rename, so a watcher never reads half a file. */
  write(rel: string, text: string): void {
    const abs = path.join(this.dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    const tmp = path.join(path.dirname(abs), `.${path.basename(abs)}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, abs);
  }

  remove(rel: string): void {
    rmSync(path.join(this.dir, rel), { recursive: true, force: true });
  }

  rename(from: string, to: string): void {
    renameSync(path.join(this.dir, from), path.join(this.dir, to));
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Records every event as "type Kind ns/name" in arrival order. */
export function recordEvents(store: MemoryStore): { events: string[]; raw: StoreEvent[] } {
  const out = { events: [] as string[], raw: [] as StoreEvent[] };
  store.subscribe((batch) => {
    for (const e of batch) {
      out.raw.push(e);
      out.events.push(
        `${e.type} ${e.kind} ${e.object.metadata.namespace ? `${e.object.metadata.namespace}/` : ''}${e.object.metadata.name}`,
      );
    }
  });
  return out;
}

/** Resolves when the store satisfies `check`; rejects with `what` after WAIT_LIMIT_MS. */
export function waitFor(store: MemoryStore, what: string, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, WAIT_LIMIT_MS);
    const off = store.subscribe(() => {
      if (!check()) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

export const configMap = (name: string, value: string, namespace = 'apps'): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  value: "${value}"\n`;
