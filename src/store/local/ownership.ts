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

/** Objects claimed between two pauses when a large file is indexed. */
const SET_FILE_SLICE = 1000;

/** One file's copy of an object. */
interface Claim {
  file: string;
  order: number;
  /** Position in the file, so a file defining an object twice keeps its first copy. */
  index: number;
  object: ParsedObject;
  fingerprint: string;
}

/**
 * Who owns each object, kept up to date file by file: replacing one file's objects costs the
 * size of that file (and of the objects it shares with other files), not of the folder. The ids
 * whose owner may have changed collect in `dirty` until the source publishes them.
 */
export class OwnershipIndex {
  /** object id -> file -> that file's copies (usually one file with one copy). */
  private readonly claims = new Map<string, Map<string, Claim[]>>();
  private readonly byFile = new Map<string, string[]>();
  private readonly duplicateIssues = new Map<string, FileIssue[]>();
  private duplicateCount = 0;
  readonly dirty = new Set<string>();

  /** Replaces what `file` defines, pausing between slices of a large file (see Slicer). */
  async setFileInSlices<T extends ParsedObject>(
    file: string,
    order: number,
    objects: readonly T[],
    fingerprint: (o: T) => string,
    pause: () => Promise<void>,
  ): Promise<void> {
    this.setFile(file, order, []);
    const ids: string[] = [];
    for (let i = 0; i < objects.length; i += SET_FILE_SLICE) {
      await pause();
      this.addClaims(file, order, objects, i, Math.min(objects.length, i + SET_FILE_SLICE), fingerprint, ids);
    }
    if (ids.length > 0) this.byFile.set(file, ids);
  }

  /** Replaces what `file` defines; an empty list (or a removed file) drops its claims. */
  setFile<T extends ParsedObject>(
    file: string,
    order: number,
    objects: readonly T[],
    fingerprint: (o: T) => string = (o) => canonicalJson(o.object),
  ): void {
    for (const id of this.byFile.get(file) ?? []) {
      this.claims.get(id)?.delete(file);
      if (this.claims.get(id)?.size === 0) this.claims.delete(id);
      this.dirty.add(id);
    }
    if (objects.length === 0) {
      this.byFile.delete(file);
      return;
    }
    const ids: string[] = [];
    this.addClaims(file, order, objects, 0, objects.length, fingerprint, ids);
    this.byFile.set(file, ids);
  }

  private addClaims<T extends ParsedObject>(
    file: string,
    order: number,
    objects: readonly T[],
    from: number,
    to: number,
    fingerprint: (o: T) => string,
    ids: string[],
  ): void {
    for (let index = from; index < to; index++) {
      const object = objects[index];
      if (object === undefined) break; // never: to <= objects.length
      const id = objectId(object.kind, object.object);
      let perFile = this.claims.get(id);
      if (!perFile) this.claims.set(id, (perFile = new Map<string, Claim[]>()));
      let copies = perFile.get(file);
      if (!copies) {
        perFile.set(file, (copies = []));
        ids.push(id);
      }
      copies.push({ file, order, index, object, fingerprint: fingerprint(object) });
      this.dirty.add(id);
    }
  }

  /** The copy that wins `id`: lowest load order, then first in its file; the others are reported. */
  resolve(id: string): Desired | undefined {
    const perFile = this.claims.get(id);
    let owner: Claim | undefined;
    for (const copies of perFile?.values() ?? []) {
      const first = copies[0];
      if (first && (!owner || first.order < owner.order)) owner = first;
    }
    const issues: FileIssue[] = [];
    for (const copies of perFile?.values() ?? []) {
      for (const c of copies) {
        if (c === owner || !owner) continue;
        issues.push({
          file: c.file,
          line: c.object.line,
          message: `${c.object.kind} ${keyOf(c.object.object)} is already defined in ${owner.file}; this copy is ignored`,
        });
      }
    }
    this.duplicateCount += issues.length - (this.duplicateIssues.get(id)?.length ?? 0);
    if (issues.length > 0) this.duplicateIssues.set(id, issues);
    else this.duplicateIssues.delete(id);
    return (
      owner && {
        kind: owner.object.kind,
        object: owner.object.object,
        fingerprint: owner.fingerprint,
        file: owner.file,
      }
    );
  }

  duplicates(): FileIssue[] {
    return [...this.duplicateIssues.values()].flat();
  }

  duplicatesCount(): number {
    return this.duplicateCount;
  }
}

/** Ownership of a whole folder at once: the same rule as the index, for callers holding every file. */
export function resolveOwnership(files: readonly FileObjects[]): {
  desired: Map<string, Desired>;
  duplicates: FileIssue[];
} {
  const index = new OwnershipIndex();
  const sorted = [...files].sort((a, b) => a.order - b.order);
  for (const f of sorted) index.setFile(f.file, f.order, f.objects);
  const desired = new Map<string, Desired>();
  for (const id of index.dirty) {
    const want = index.resolve(id);
    if (want) desired.set(id, want);
  }
  const rank = new Map(sorted.map((f, i) => [f.file, i]));
  // Every issue's file is one of `files`, so each has a rank.
  const duplicates = index
    .duplicates()
    .sort((a, b) => (rank.get(a.file) ?? 0) - (rank.get(b.file) ?? 0) || a.line - b.line);
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
    const stored = storedForm(want, cur, nextVersion, now);
    next.set(id, { ...want, stored });
    changes.push({ kind: want.kind, object: stored });
    if (cur) counts.update++;
    else counts.add++;
  }
  return { next, changes, counts };
}

/** The object as the store gets it: the next resourceVersion, and the creationTimestamp of its first version. */
export function storedForm(
  want: Desired,
  cur: Stored | undefined,
  nextVersion: () => string,
  now: () => string,
): KubeObject {
  const metadata = {
    ...want.object.metadata,
    resourceVersion: nextVersion(),
    // The API server sets this once at create; an update keeps it.
    creationTimestamp: want.object.metadata.creationTimestamp ?? cur?.stored.metadata.creationTimestamp ?? now(),
  };
  return { ...want.object, metadata };
}
