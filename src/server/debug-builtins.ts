// The debug endpoints the server itself offers: effective meshConfig, store contents, log levels.

import { KIND_IDS, KindId } from '../store/kinds';
import type { ObjectStore } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import { logs } from '../log/logger';
import type { DebugRegistry, DebugResponse } from '../contract/host';

/** /debug/config answers at most this many objects; narrow with kind= and namespace= for more. */
export const MAX_DEBUG_CONFIG_OBJECTS = 5_000;

export function registerBuiltinDebug(debug: DebugRegistry, store: ObjectStore, mesh: MeshConfigSource): void {
  debug.add('mesh', 'effective meshConfig as JSON', () => ({ body: mesh.current() }));

  debug.add('config', 'objects in the store; ?kind=Pod&namespace=ns', (req): DebugResponse => {
    const kindParam = req.query.get('kind');
    const namespace = req.query.get('namespace') ?? undefined;
    if (kindParam && !KIND_IDS.includes(kindParam as KindId)) {
      return { status: 400, body: { error: `unknown kind "${kindParam}"; one of ${KIND_IDS.join(', ')}` } };
    }
    const kinds = kindParam ? [kindParam as KindId] : KIND_IDS;
    const objects = kinds.flatMap((kind) => store.list(kind, namespace).map((o) => ({ kind, ...o })));
    objects.sort((a, b) =>
      a.kind === b.kind
        ? `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(
            `${b.metadata.namespace ?? ''}/${b.metadata.name}`,
          )
        : a.kind.localeCompare(b.kind),
    );
    const truncated = objects.length > MAX_DEBUG_CONFIG_OBJECTS;
    return { body: { total: objects.length, truncated, objects: objects.slice(0, MAX_DEBUG_CONFIG_OBJECTS) } };
  });

  debug.add('logging', 'log levels per scope; PUT ?scope=ca&level=debug changes one', (req): DebugResponse => {
    if (req.method === 'GET') return { body: logs.levels() };
    if (req.method !== 'PUT' && req.method !== 'POST') return { status: 405, body: { error: 'use GET or PUT' } };
    const scope = req.query.get('scope');
    const level = req.query.get('level');
    if (!scope || !level)
      return { status: 400, body: { error: 'PUT /debug/logging needs ?scope=<scope>&level=<level>' } };
    try {
      logs.setLevel(scope, level);
    } catch (err) {
      return { status: 400, body: { error: (err as Error).message } };
    }
    return { body: logs.levels() };
  });
}
