// Manifest files -> store objects, the way `kubectl apply -f` reads them: multi-document YAML,
// JSON, and List kinds. Pure: no file system, no clock, no counters. Errors carry the file and
// the 1-based line so an operator can jump straight to the problem.

import { createHash } from 'node:crypto';
import { KindId, KindInfo, kindOf } from '../kinds';
import type { KubeObject } from '../types';
import { exceedsDepth } from './depth';
import { jsonDocuments, ManifestError, yamlDocuments } from './documents';
import {
  MAX_MANIFEST_BYTES,
  MAX_MANIFEST_DEPTH,
  MAX_MANIFEST_OBJECTS,
  TOO_DEEP,
  TOO_LARGE,
  TOO_MANY_OBJECTS,
} from './limits';

export { ManifestError } from './documents';
export * from './limits';

/** Namespaced objects without a namespace land here, as with kubectl. */
export const DEFAULT_NAMESPACE = 'default';

export interface ParsedObject {
  kind: KindId;
  object: KubeObject;
  /** Line where the object's document (or List item) starts. */
  line: number;
}

/** A document of a kind the store does not hold. */
export interface SkippedDocument {
  apiVersion: string;
  kind: string;
  line: number;
  /** metadata.name and metadata.namespace when the document has them, to name it in reports. */
  name?: string;
  namespace?: string;
}

export interface ParsedManifest {
  objects: ParsedObject[];
  /** Documents of kinds the store does not hold. */
  skipped: SkippedDocument[];
}

type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A stable uid so restarts and golden tests see the same identity for the same object. */
export function deterministicUid(kind: string, namespace: string | undefined, name: string): string {
  const h = createHash('sha256')
    .update(`${kind}/${namespace ?? ''}/${name}`)
    .digest('hex');
  // Shaped like an RFC 4122 version-5 UUID so tools that check the format accept it.
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Parses one file. Throws ManifestError for the first problem; a bad file yields no objects. */
export function parseManifest(text: string, file: string): ParsedManifest {
  if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) throw new ManifestError(file, 1, TOO_LARGE);
  const c: Collector = { file, out: { objects: [], skipped: [] }, left: MAX_MANIFEST_OBJECTS };
  for (const { value, line, itemLine } of file.toLowerCase().endsWith('.json')
    ? jsonDocuments(text, file)
    : yamlDocuments(text, file)) {
    if (value === null || value === undefined) continue; // an empty document, e.g. a trailing "---"
    if (!isMap(value))
      throw new ManifestError(file, line, 'document is not a mapping (expected apiVersion, kind, metadata)');
    // Aliases can nest what the parser saw shallow; the limit is on the value the store would hold.
    if (exceedsDepth(value, MAX_MANIFEST_DEPTH)) throw new ManifestError(file, line, TOO_DEEP);
    collect(value, line, itemLine, c);
  }
  return c.out;
}

/** What one file's documents are collected into. */
interface Collector {
  file: string;
  out: ParsedManifest;
  /** Documents and List items this file may still hold (MAX_MANIFEST_OBJECTS). */
  left: number;
}

function collect(doc: Json, line: number, itemLineOf: ((i: number) => number) | undefined, c: Collector): void {
  const { file, out } = c;
  if (--c.left < 0) throw new ManifestError(file, line, TOO_MANY_OBJECTS);
  const apiVersion = doc['apiVersion'];
  const kind = doc['kind'];
  if (typeof apiVersion !== 'string' || apiVersion === '') throw new ManifestError(file, line, 'apiVersion is missing');
  if (typeof kind !== 'string' || kind === '') throw new ManifestError(file, line, 'kind is missing');
  if (kind === 'List' || (kind.endsWith('List') && Array.isArray(doc['items']))) {
    c.left++; // the List itself is not an object; its items are
    collectList(doc, apiVersion, kind, line, itemLineOf, c);
    return;
  }
  const info = kindOf(apiVersion, kind);
  if (!info) {
    const meta = isMap(doc['metadata']) ? doc['metadata'] : {};
    const name = typeof meta['name'] === 'string' && meta['name'] !== '' ? meta['name'] : undefined;
    const namespace = typeof meta['namespace'] === 'string' && meta['namespace'] !== '' ? meta['namespace'] : undefined;
    out.skipped.push({ apiVersion, kind, line, ...(name ? { name } : {}), ...(namespace ? { namespace } : {}) });
    return;
  }
  out.objects.push({ kind: info.id, object: normalize(doc, info, file, line), line });
}

function collectList(
  doc: Json,
  apiVersion: string,
  kind: string,
  line: number,
  itemLineOf: ((i: number) => number) | undefined,
  c: Collector,
): void {
  const { file } = c;
  const items = doc['items'] ?? [];
  if (!Array.isArray(items)) throw new ManifestError(file, line, `${kind}.items is not a list`);
  if (items.length > c.left) throw new ManifestError(file, line, TOO_MANY_OBJECTS);
  // A typed list (PodList) may omit apiVersion/kind on its items, as the API server's list responses do.
  const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
  items.forEach((item: unknown, i) => {
    const itemLine = itemLineOf?.(i) ?? line;
    if (!isMap(item)) throw new ManifestError(file, itemLine, `${kind}.items[${i}] is not a mapping`);
    const withType = itemKind ? { apiVersion, kind: itemKind, ...item } : item;
    if (withType['kind'] === 'List') throw new ManifestError(file, itemLine, `${kind}.items[${i}] is a nested List`);
    collect(withType, itemLine, undefined, c);
  });
}

/** Fills what the API server would on create, except resourceVersion and creationTimestamp (the source owns those). */
function normalize(doc: Json, info: KindInfo, file: string, line: number): KubeObject {
  const meta = doc['metadata'];
  if (!isMap(meta)) throw new ManifestError(file, line, `${info.kind} has no metadata`);
  const name = meta['name'];
  if (typeof name !== 'string' || name === '') throw new ManifestError(file, line, `${info.kind} has no metadata.name`);
  const nsField = meta['namespace'];
  if (nsField !== undefined && (typeof nsField !== 'string' || nsField === '')) {
    throw new ManifestError(file, line, `${info.kind} ${name}: metadata.namespace must be a non-empty string`);
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isMap(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      throw new ManifestError(
        file,
        line,
        `${info.kind} ${name}: metadata.${field} must map strings to strings (quote values like "true" or "8080")`,
      );
    }
  }
  // Cluster-scoped kinds have no namespace; keep store keys consistent whatever the file says.
  const namespace = info.namespaced ? (nsField ?? DEFAULT_NAMESPACE) : undefined;
  const metadata: Json = { ...meta, name };
  if (namespace === undefined) delete metadata['namespace'];
  else metadata['namespace'] = namespace;
  if (typeof metadata['uid'] !== 'string' || metadata['uid'] === '')
    metadata['uid'] = deterministicUid(info.kind, namespace, name);
  // A resourceVersion in a file would be stale the moment it is read; the source assigns its own.
  delete metadata['resourceVersion'];
  return { ...doc, metadata } as unknown as KubeObject;
}
