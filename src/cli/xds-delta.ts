// `xds-client --watch`: each delta as lines a person can read - the kind, the namespace/name,
// the addresses and what happened (added / removed / changed, and for a change the fields that
// differ). Removed resources arrive as a bare name, so the last decoded resource per name is kept.

import type { DeltaResponse, HeldResources } from './ads-client';
import { decodeResource, DecodedResource } from './xds-view';

/**
 * At most this many changed field paths are listed per changed resource; more are counted
 * ("+N more"). A watch line should stay one line even when a Workload is rebuilt wholesale.
 */
export const MAX_CHANGED_FIELDS = 8;

/**
 * Objects are compared field by field only this deep; below it a difference is reported at the
 * parent path. Workload, Service and Authorization messages nest a few levels; this bounds the walk.
 */
export const MAX_DIFF_DEPTH = 6;

const KIND_LABEL: Record<DecodedResource['kind'], string> = {
  workload: 'Workload',
  service: 'Service',
  policy: 'Authorization',
  unknown: 'Unknown',
};

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** namespace/name as the mesh names it: a Service by its hostname, the rest by name. */
export function displayName(d: DecodedResource): string {
  const v = d.value;
  if (d.kind === 'workload') return `${text(v['namespace'])}/${text(v['name'])}`;
  if (d.kind === 'service') return `${text(v['namespace'])}/${text(v['hostname'])}`;
  if (d.kind === 'policy') return `${text(v['namespace'])}/${text(v['name'])}`;
  return d.name;
}

export function displayAddresses(d: DecodedResource): string {
  const list = d.value['addresses'];
  if (!Array.isArray(list)) return '';
  return list
    .map((a: unknown) => {
      if (typeof a === 'string') return a;
      if (a && typeof a === 'object') {
        const { network, address } = a as { network?: unknown; address?: unknown };
        return `${text(network)}/${text(address)}`;
      }
      return '';
    })
    .join(',');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The field paths that differ between two decoded messages, sorted, at most `limit` of them plus
 * the total count. Arrays compare as a whole (an address list that changed is one path).
 */
export function changedFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  limit = MAX_CHANGED_FIELDS,
): { paths: string[]; total: number } {
  const found: string[] = [];
  const walk = (a: unknown, b: unknown, path: string, depth: number): void => {
    if (isObject(a) && isObject(b) && depth < MAX_DIFF_DEPTH) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const k of [...keys].sort()) walk(a[k], b[k], path === '' ? k : `${path}.${k}`, depth + 1);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) found.push(path === '' ? '(whole)' : path);
  };
  walk(before, after, '', 0);
  return { paths: found.slice(0, limit), total: found.length };
}

/** Renders deltas, remembering the last decoded resource per type and name (what the server sent, no more). */
export class DeltaNamer {
  private readonly last = new Map<string, Map<string, DecodedResource>>();

  /** Starts from what the client already holds (the initial state printed as a table). */
  seed(held: HeldResources): void {
    for (const [typeUrl, byName] of held.byType) {
      const map = this.byType(typeUrl);
      for (const r of byName.values()) map.set(r.name, decodeResource(typeUrl, r));
    }
  }

  render(r: DeltaResponse): string {
    const map = this.byType(r.type_url);
    const lines = [
      `# ${r.type_url} nonce=${r.nonce} resources=${r.resources.length} removed=${r.removed_resources.length}`,
    ];
    for (const res of r.resources) {
      const d = decodeResource(r.type_url, res);
      const before = map.get(res.name);
      map.set(res.name, d);
      const head = `${KIND_LABEL[d.kind]} ${displayName(d)} [${displayAddresses(d)}] uid=${d.name}`;
      if (!before) {
        lines.push(`+ added ${head} version=${d.version}`);
        continue;
      }
      const { paths, total } = changedFields(before.value, d.value);
      const more = total > paths.length ? ` (+${total - paths.length} more)` : '';
      lines.push(`~ changed ${head} version=${d.version} fields=${paths.join(',') || '(none)'}${more}`);
    }
    for (const name of r.removed_resources) {
      const before = map.get(name);
      map.delete(name);
      if (!before) lines.push(`- removed ${name} (not held before)`);
      else
        lines.push(
          `- removed ${KIND_LABEL[before.kind]} ${displayName(before)} [${displayAddresses(before)}] uid=${name}`,
        );
    }
    return lines.join('\n') + '\n';
  }

  private byType(typeUrl: string): Map<string, DecodedResource> {
    let map = this.last.get(typeUrl);
    if (!map) this.last.set(typeUrl, (map = new Map<string, DecodedResource>()));
    return map;
  }
}
