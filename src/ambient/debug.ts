// /debug/ambient/*: what every ztunnel is told, as protobuf JSON with IPs shown as text. Each page
// is a JSON array in resource-name order, paged by ?limit=&continue= (contract/debug-page.ts).

import type { DebugRegistry, DebugRequest, DebugResponse } from '../contract/host';
import { byKey, pageError, pageResponse, parsePageRequest, SortedKeys, takePage } from '../contract/debug-page';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, type ResourceCache } from '../contract/xds-resources';
import { addressToJson, authorizationToJson } from './codec';

/** What the pages read of the index: resources by type, the node index, and change events. */
export type AmbientDebugSource = Pick<ResourceCache, 'get' | 'all' | 'workloadsOnNode' | 'subscribe'>;

type Picker = (key: string) => Record<string, unknown> | undefined;

function paged(req: DebugRequest, keys: () => readonly string[], pick: Picker): DebugResponse {
  const page = parsePageRequest(req.query);
  if ('error' in page) return pageError(page.error);
  const { items, next } = takePage(keys(), page, pick);
  return pageResponse(req, items, next);
}

export function registerAmbientDebug(debug: DebugRegistry, index: AmbientDebugSource): void {
  const addresses = new SortedKeys(() => [...index.all(ADDRESS_TYPE_URL)].map((r) => r.name));
  const authorizations = new SortedKeys(() => [...index.all(AUTHORIZATION_TYPE_URL)].map((r) => r.name));
  index.subscribe((changes) => {
    for (const c of changes) (c.typeUrl === ADDRESS_TYPE_URL ? addresses : authorizations).invalidate();
  });

  debug.add(
    'ambient/workloads',
    'Workloads sent to ztunnel (query: node=, namespace=, limit=, continue=)',
    (req): DebugResponse => {
      const node = req.query.get('node');
      const namespace = req.query.get('namespace');
      const keys = () => (node !== null ? [...index.workloadsOnNode(node)].sort(byKey) : addresses.get());
      return paged(req, keys, (name) => {
        const r = index.get(ADDRESS_TYPE_URL, name);
        const w = r ? (addressToJson(r.bytes).workload as Record<string, unknown> | undefined) : undefined;
        if (!r || !w || (namespace !== null && w.namespace !== namespace)) return undefined;
        return { ...w, resourceVersion: r.version };
      });
    },
  );
  debug.add('ambient/services', 'Services sent to ztunnel (query: limit=, continue=)', (req) =>
    paged(
      req,
      () => addresses.get(),
      (name) => {
        const r = index.get(ADDRESS_TYPE_URL, name);
        const s = r ? (addressToJson(r.bytes).service as Record<string, unknown> | undefined) : undefined;
        return r && s ? { resourceName: r.name, ...s, resourceVersion: r.version } : undefined;
      },
    ),
  );
  debug.add('ambient/policies', 'Authorizations sent to ztunnel (query: limit=, continue=)', (req) =>
    paged(
      req,
      () => authorizations.get(),
      (name) => {
        const r = index.get(AUTHORIZATION_TYPE_URL, name);
        return r ? { resourceName: r.name, ...authorizationToJson(r.bytes), resourceVersion: r.version } : undefined;
      },
    ),
  );
}
