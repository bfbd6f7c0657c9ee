// Which file an object comes from, and what changed between two states of the folder. Pure.
//
// Rule for the same object (kind + namespace + name) in two files: the file that was loaded first
// keeps it (at startup files load in path order; later, a new file is "loaded" when it first
// parses), and every other copy is reported as an error on its own file and ignored. When the
// owning file drops the object, the next file in load order that defines it takes over, which
// an informer sees as an update (or nothing, if the copies are identical).

import type { KindId } from '../kinds';
import { keyOf, type KubeObject } from '../types';
import { canonicalJson } from './canonical';
import type { ParsedObject } from './manifest';

export interface FileIssue {
  file: string;
  line: number;
  message: string;
}

export interface FileObjects {
  file: string;
  /** Load order: lower loads first and wins duplicates. */
  order: number;
  objects: readonly ParsedObject[];
}

export interface Desired {
  kind: KindId;
  object: KubeObject;
  /** The object as parsed, key-order independent; equal fingerprints mean "no change". */
  fingerprint: string;
  file: string;
}

export function objectId(kind: KindId, object: KubeObject): string {
  return `${kind}|${keyOf(object)}`;
}

export function resolveOwnership(files: readonly FileObjects[]): { desired: Map<string, Desired>; duplicates: FileIssue[] } {
  const desired = new Map<string, Desired>();
  const duplicates: FileIssue[] = [];
  for (const f of [...files].sort((a, b) => a.order - b.order)) {
    for (const { kind, object, line } of f.objects) {
      const id = objectId(kind, object);
      const owner = desired.get(id);
      if (owner) {
        duplicates.push({
          file: f.file,
          line,
          message: `${kind} ${keyOf(object)} is already defined in ${owner.file}; this copy is ignored`,
        });
        continue;
      }
      desired.set(id, { kind, object, fingerprint: canonicalJson(object), file: f.file });
    }
  }
  return { desired, duplicates };
}

export interface Stored extends Desired {
  /** The object as handed to the store, with resourceVersion and creationTimestamp. */
  stored: KubeObject;
}

export interface Change {
  kind: KindId;
  object: KubeObject;
  deleted?: boolean;
}

/**
 * The informer-equivalent events that take the store from `current` to `desired`. Unchanged
 * objects keep their stored form (and resourceVersion); changed ones get the next version.
 */
export function diffStates(
  current: ReadonlyMap<string, Stored>,
  desired: ReadonlyMap<string, Desired>,
  nextVersion: () => string,
  now: () => string,
): { next: Map<string, Stored>; changes: Change[]; counts: { add: number; update: number; delete: number } } {
  const next = new Map<string, Stored>();
  const changes: Change[] = [];
  const counts = { add: 0, update: 0, delete: 0 };
  for (const [id, cur] of current) {
    if (!desired.has(id)) {
      changes.push({ kind: cur.kind, object: cur.stored, deleted: true });
      counts.delete++;
    }
  }
  for (const [id, want] of desired) {
    const cur = current.get(id);
    if (cur && cur.fingerprint === want.fingerprint) {
      next.set(id, { ...want, stored: cur.stored });
      continue;
    }
    const metadata = {
      ...want.object.metadata,
      resourceVersion: nextVersion(),
      // The API server sets this once at create; an update keeps it.
      creationTimestamp: want.object.metadata.creationTimestamp ?? cur?.stored.metadata.creationTimestamp ?? now(),
    };
    const stored: KubeObject = { ...want.object, metadata };
    next.set(id, { ...want, stored });
    changes.push({ kind: want.kind, object: stored });
    if (cur) counts.update++;
    else counts.add++;
  }
  return { next, changes, counts };
}
