// /debug/ambient/*: what every ztunnel is told, as protobuf JSON with IPs shown as text.

import type { DebugRegistry, DebugResponse } from '../contract/host';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../contract/xds-resources';
import type { AmbientIndex } from './ambient-index';
import { addressToJson, authorizationToJson } from './codec';

export function registerAmbientDebug(debug: DebugRegistry, index: AmbientIndex): void {
  debug.add('ambient/workloads', 'Workloads sent to ztunnel (query: node=, namespace=)', (req): DebugResponse => {
    const node = req.query.get('node');
    const namespace = req.query.get('namespace');
    const names = node !== null ? index.workloadsOnNode(node) : [...index.all(ADDRESS_TYPE_URL)].map((r) => r.name);
    const out: Record<string, unknown>[] = [];
    for (const name of names.sort()) {
      const r = index.get(ADDRESS_TYPE_URL, name);
      if (!r) continue;
      const json = addressToJson(r.bytes);
      const w = json.workload as Record<string, unknown> | undefined;
      if (!w) continue;
      if (namespace !== null && w.namespace !== namespace) continue;
      out.push({ ...w, resourceVersion: r.version });
    }
    return { body: out };
  });
  debug.add('ambient/services', 'Services sent to ztunnel', (): DebugResponse => {
    const out: Record<string, unknown>[] = [];
    for (const r of [...index.all(ADDRESS_TYPE_URL)].sort((a, b) => a.name.localeCompare(b.name))) {
      const s = addressToJson(r.bytes).service as Record<string, unknown> | undefined;
      if (s) out.push({ resourceName: r.name, ...s, resourceVersion: r.version });
    }
    return { body: out };
  });
  debug.add('ambient/policies', 'Authorizations sent to ztunnel', (): DebugResponse => {
    const out = [...index.all(AUTHORIZATION_TYPE_URL)]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((r) => ({ resourceName: r.name, ...authorizationToJson(r.bytes), resourceVersion: r.version }));
    return { body: out };
  });
}
