// /debug/explain: the decision record of `istiod-ts explain`, from the running server's own store.
// A question that cannot be answered as asked is a 400 naming what is wrong; a denial or a missing
// workload is an answer (200), the record says which.

import type { DebugRegistry, DebugResponse } from '../contract/host';
import type { Explainer } from './explainer';
import { ExplainQueryError, queryFromParams } from './query';

export const EXPLAIN_DEBUG_PATH = 'explain';

export function registerExplainDebug(debug: DebugRegistry, explainer: Explainer): void {
  debug.add(
    EXPLAIN_DEBUG_PATH,
    'why a ztunnel on a node may get a certificate for an identity (identity=, node=), or why a pod has its protocol, services, waypoint and policies (workload=NS/POD): every fact and rule',
    (req): DebugResponse => {
      try {
        return { body: explainer.explain(queryFromParams(req.query)) };
      } catch (err) {
        if (err instanceof ExplainQueryError) return { status: 400, body: { error: err.message } };
        throw err;
      }
    },
  );
}
