// Manifest files -> store objects, the way `kubectl apply -f` reads them: multi-document YAML,
// JSON, and List kinds. Pure: no file system, no clock, no counters. Errors carry the file and
// the 1-based line so an operator can jump straight to the problem.

import { createHash } from 'node:crypto';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { KindId, KindInfo, kindOf } from '../kinds';
import type { KubeObject } from '../types';

/** A file larger than this is refused: local mode is for demos and tests, not bulk data. */
export const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;

/** Namespaced objects without a namespace land here, as with kubectl. */
export const DEFAULT_NAMESPACE = 'default';

export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'ManifestError';
  }
}

export interface ParsedObject {
  kind: KindId;
  object: KubeObject;
  /** Line where the object's document (or List item) starts. */
  line: number;
}

export interface ParsedManifest {
  objects: ParsedObject[];
  /** Documents of kinds the store does not hold. */
  skipped: { apiVersion: string; kind: string; line: number }[];
}

type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A stable uid so restarts and golden tests see the same identity for the same object. */
export function deterministicUid(kind: string, namespace: string | undefined, name: string): string {
  const h = createHash('sha256').update(`${kind}/${namespace ?? ''}/${name}`).digest('hex');
  // Shaped like an RFC 4122 version-5 UUID so tools that check the format accept it.
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Parses one file. Throws ManifestError for the first problem; a bad file yields no objects. */
export function parseManifest(text: string, file: string): ParsedManifest {
  if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) {
    throw new ManifestError(file, 1, `file is larger than ${MAX_MANIFEST_BYTES} bytes`);
  }
  const out: ParsedManifest = { objects: [], skipped: [] };
  for (const { value, line, itemLine } of file.toLowerCase().endsWith('.json') ? jsonDocuments(text, file) : yamlDocuments(text, file)) {
    if (value === null || value === undefined) continue; // an empty document, e.g. a trailing "---"
    if (!isMap(value)) throw new ManifestError(file, line, 'document is not a mapping (expected apiVersion, kind, metadata)');
    collect(value, line, file, out, itemLine);
  }
  return out;
}

interface RawDocument {
  value: unknown;
  line: number;
  /** Line of items[i], for List kinds. */
  itemLine?: (index: number) => number;
}

function yamlDocuments(text: string, file: string): RawDocument[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false });
  const list: Document.Parsed[] = Array.isArray(docs) ? docs : [docs];
  const out: RawDocument[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) throw new ManifestError(file, lines.linePos(err.pos[0]).line, err.message);
    const start = doc.contents?.range?.[0] ?? doc.range[0];
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new ManifestError(file, lines.linePos(start).line, (e as Error).message);
    }
    out.push({
      value,
      line: lines.linePos(start).line,
      itemLine: (i) => {
        const node = doc.getIn(['items', i], true) as { range?: [number, number, number] } | undefined;
        return lines.linePos(node?.range?.[0] ?? start).line;
      },
    });
  }
  return out;
}

/** JSON is parsed strictly (YAML would accept `{"a": }`), with the line of the error when V8 gives a position. */
function jsonDocuments(text: string, file: string): RawDocument[] {
  try {
    return [{ value: JSON.parse(text), line: 1 }];
  } catch (e) {
    const message = (e as Error).message.split('\n')[0]!;
    const at = /at position (\d+)/.exec((e as Error).message);
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : 1;
    throw new ManifestError(file, line, message);
  }
}

function collect(doc: Json, line: number, file: string, out: ParsedManifest, itemLineOf: ((i: number) => number) | undefined): void {
  const apiVersion = doc['apiVersion'];
  const kind = doc['kind'];
  if (typeof apiVersion !== 'string' || apiVersion === '') throw new ManifestError(file, line, 'apiVersion is missing');
  if (typeof kind !== 'string' || kind === '') throw new ManifestError(file, line, 'kind is missing');
  if (kind === 'List' || (kind.endsWith('List') && Array.isArray(doc['items']))) {
    collectList(doc, apiVersion, kind, line, file, out, itemLineOf);
    return;
  }
  const info = kindOf(apiVersion, kind);
  if (!info) {
    out.skipped.push({ apiVersion, kind, line });
    return;
  }
  out.objects.push({ kind: info.id, object: normalize(doc, info, file, line), line });
}

function collectList(
  doc: Json,
  apiVersion: string,
  kind: string,
  line: number,
  file: string,
  out: ParsedManifest,
  itemLineOf: ((i: number) => number) | undefined,
): void {
  const items = doc['items'] ?? [];
  if (!Array.isArray(items)) throw new ManifestError(file, line, `${kind}.items is not a list`);
  // A typed list (PodList) may omit apiVersion/kind on its items, as the API server's list responses do.
  const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
  items.forEach((item: unknown, i) => {
    const itemLine = itemLineOf?.(i) ?? line;
    if (!isMap(item)) throw new ManifestError(file, itemLine, `${kind}.items[${i}] is not a mapping`);
    const withType = itemKind ? { apiVersion, kind: itemKind, ...item } : item;
    if (withType['kind'] === 'List') throw new ManifestError(file, itemLine, `${kind}.items[${i}] is a nested List`);
    collect(withType, itemLine, file, out, undefined);
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
      throw new ManifestError(file, line, `${info.kind} ${name}: metadata.${field} must map strings to strings (quote values like "true" or "8080")`);
    }
  }
  // Cluster-scoped kinds have no namespace; keep store keys consistent whatever the file says.
  const namespace = info.namespaced ? (nsField as string | undefined) ?? DEFAULT_NAMESPACE : undefined;
  const metadata: Json = { ...meta, name };
  if (namespace === undefined) delete metadata['namespace'];
  else metadata['namespace'] = namespace;
  if (typeof metadata['uid'] !== 'string' || metadata['uid'] === '') metadata['uid'] = deterministicUid(info.kind, namespace, name);
  // A resourceVersion in a file would be stale the moment it is read; the source assigns its own.
  delete metadata['resourceVersion'];
  return { ...doc, metadata } as unknown as KubeObject;
}
