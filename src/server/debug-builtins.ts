// The debug endpoints the server itself offers: effective meshConfig, store contents, log levels.

import { KIND_IDS, KindId } from '../store/kinds';
import type { ObjectStore } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import { logs } from '../log/logger';
import type { DebugRegistry, DebugResponse } from '../contract/host';
import { pageError, pageResponse, parsePageRequest } from '../contract/debug-page';
import { registerConfigz } from './debug-configz';
import { meshConfigJson } from './debug-mesh';
import { StorePages } from './debug-store-pages';

export function registerBuiltinDebug(debug: DebugRegistry, store: ObjectStore, mesh: MeshConfigSource): void {
  debug.add('mesh', 'effective meshConfig as istiod shows it (protobuf JSON: zero values left out)', () => ({
    body: meshConfigJson(mesh.current()),
  }));

  const pages = new StorePages(store);
  registerConfigz(debug, pages);
  debug.add('config', 'objects in the store; ?kind=Pod&namespace=ns&limit=&continue=', (req): DebugResponse => {
    const kindParam = req.query.get('kind');
    const namespace = req.query.get('namespace') ?? undefined;
    if (kindParam && !KIND_IDS.includes(kindParam as KindId)) {
      return { status: 400, body: { error: `unknown kind "${kindParam}"; one of ${KIND_IDS.join(', ')}` } };
    }
    const kinds = kindParam ? [kindParam as KindId] : KIND_IDS;
    const page = parsePageRequest(req.query);
    if ('error' in page) return pageError(page.error);
    const { items, next, total } = pages.page(kinds, namespace, page);
    // total counts every match; truncated says more pages follow (the continue token is also in the headers).
    const body = {
      total,
      truncated: next !== undefined,
      objects: items.map(({ kind, object }) => ({ kind, ...object })),
      ...(next !== undefined ? { continue: next } : {}),
    };
    return pageResponse(req, body, next);
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
