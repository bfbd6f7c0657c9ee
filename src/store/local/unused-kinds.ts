// Local mode's share of "nothing dropped in silence": documents of kinds the server does not use
// (a Deployment, an Istio Gateway, a ServiceEntry at an apiVersion it does not read) and objects
// the store holds but local mode never reads (ConfigMaps) are reported to IgnoredObjects with the
// file and line, once per object, and cleared when the file no longer holds them.

import { KIND_IDS, KINDS } from '../kinds';
import type { IgnoredObjects } from '../ignored';
import type { ParsedObject, SkippedDocument } from './manifest';

/** Kinds the store holds that local mode reads nothing from, with why. */
export const LOCAL_UNUSED_KINDS: ReadonlyMap<string, string> = new Map([
  ['ConfigMap', 'local mode reads no ConfigMaps (meshConfig comes from --meshConfig)'],
]);

const apiVersions = (kind: string): string[] =>
  KIND_IDS.map((id) => KINDS[id])
    .filter((k) => k.kind === kind)
    .flatMap((k) => k.versions.map((v) => (k.group === '' ? v : `${k.group}/${v}`)));

/** Why a document of a kind the store does not hold is ignored. */
export function skippedReason(doc: SkippedDocument): string {
  const known = apiVersions(doc.kind);
  return known.length > 0
    ? `${doc.apiVersion} ${doc.kind} is not read; istiod-ts reads ${doc.kind} only as ${known.join(', ')}`
    : `istiod-ts does not use kind ${doc.kind} (${doc.apiVersion})`;
}

const nameOf = (namespace: string | undefined, name: string | undefined): string =>
  `${namespace ? `${namespace}/` : ''}${name ?? '(no metadata.name)'}`;

/** Keeps, per file, the keys it reported, so a re-read clears what the file no longer holds. */
export class UnusedKindsReporter {
  private readonly byFile = new Map<string, string[]>();

  constructor(
    private readonly ignored: IgnoredObjects,
    private readonly unusedKinds: ReadonlyMap<string, string> = LOCAL_UNUSED_KINDS,
  ) {}

  /** A file was parsed: report what it holds that is ignored, clear what it held before and does not now. */
  fileParsed(file: string, skipped: readonly SkippedDocument[], objects: readonly ParsedObject[]): void {
    const keys: string[] = [];
    for (const doc of skipped)
      keys.push(
        this.ignored.report(doc.kind, nameOf(doc.namespace, doc.name), skippedReason(doc), { file, line: doc.line }),
      );
    for (const { kind, object, line } of objects) {
      const reason = this.unusedKinds.get(kind);
      if (reason === undefined) continue;
      keys.push(
        this.ignored.report(kind, nameOf(object.metadata.namespace, object.metadata.name), reason, { file, line }),
      );
    }
    const now = new Set(keys);
    for (const key of this.byFile.get(file) ?? []) if (!now.has(key)) this.ignored.clear(key);
    if (keys.length > 0) this.byFile.set(file, keys);
    else this.byFile.delete(file);
  }

  /** The file is gone: nothing in it is ignored any more. */
  fileGone(file: string): void {
    for (const key of this.byFile.get(file) ?? []) this.ignored.clear(key);
    this.byFile.delete(file);
  }
}
