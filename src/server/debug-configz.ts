// /debug/configz: the Istio configuration this control plane holds, as istiod lists it: a JSON array
// of Kubernetes-shaped objects (apiVersion, kind, metadata, spec, status) of the kinds installed by
// CRDs (Istio's and the Gateway API's), never Pods or Services. Paged like every listing
// (contract/debug-page.ts): kind, then namespace/name.

import type { DebugRegistry, DebugResponse } from '../contract/host';
import { pageError, pageResponse, parsePageRequest } from '../contract/debug-page';
import { KIND_IDS, KINDS } from '../store/kinds';
import type { StorePages } from './debug-store-pages';

/** The config kinds: what istiod's config store holds (CRD-installed kinds). */
export const CONFIGZ_KINDS = KIND_IDS.filter((k) => KINDS[k].crd);

export function registerConfigz(debug: DebugRegistry, pages: StorePages): void {
  debug.add(
    'configz',
    'Istio and Gateway API config held, as Kubernetes objects (query: limit=, continue=)',
    (req): DebugResponse => {
      const page = parsePageRequest(req.query);
      if ('error' in page) return pageError(page.error);
      const { items, next } = pages.page(CONFIGZ_KINDS, undefined, page);
      const body = items.map(({ kind, object }) => {
        const info = KINDS[kind];
        const { apiVersion: _apiVersion, kind: _kind, metadata, ...rest } = object;
        return { apiVersion: `${info.group}/${info.version}`, kind: info.kind, metadata, ...rest };
      });
      return pageResponse(req, body, next);
    },
  );
}
