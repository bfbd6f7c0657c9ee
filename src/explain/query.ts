// What explain is asked, from the command line or /debug/explain's query, checked the same way for
// both: a bad question is one line naming what is wrong (exit 2, or HTTP 400).

import { parseSpiffeId } from '../security/spiffe';

export type ExplainQuery =
  { kind: 'identity'; node: string; identity: string } | { kind: 'workload'; namespace: string; name: string };

/** A question explain cannot answer as asked; the message names the argument and the fix. */
export class ExplainQueryError extends Error {}

/** Longest node, namespace or pod name accepted (Kubernetes object names are at most 253 characters). */
export const MAX_EXPLAIN_NAME_LENGTH = 253;

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function checkName(what: string, value: string): string {
  if (value === '') throw new ExplainQueryError(`${what} is empty`);
  if (value.length > MAX_EXPLAIN_NAME_LENGTH)
    throw new ExplainQueryError(`${what} is longer than ${MAX_EXPLAIN_NAME_LENGTH} characters`);
  if (!NAME.test(value)) throw new ExplainQueryError(`${what} "${value}" is not a Kubernetes object name`);
  return value;
}

/** `--node N --identity spiffe://...`: the node a ztunnel runs on and the identity it asks for. */
export function identityQuery(node: string | undefined, identity: string | undefined): ExplainQuery {
  if (node === undefined) throw new ExplainQueryError('node is missing: give the node the ztunnel runs on');
  if (identity === undefined)
    throw new ExplainQueryError('identity is missing: give spiffe://<trust domain>/ns/<namespace>/sa/<account>');
  checkName('node', node);
  try {
    parseSpiffeId(identity);
  } catch (err) {
    throw new ExplainQueryError((err as Error).message);
  }
  return { kind: 'identity', node, identity };
}

/** `NS/POD`: the pod whose workload is explained. */
export function workloadQuery(ref: string | undefined): ExplainQuery {
  if (ref === undefined) throw new ExplainQueryError('workload is missing: give NAMESPACE/POD');
  const parts = ref.split('/');
  if (parts.length !== 2) throw new ExplainQueryError(`workload "${ref}" is not NAMESPACE/POD`);
  const [namespace = '', name = ''] = parts;
  return { kind: 'workload', namespace: checkName('namespace', namespace), name: checkName('pod name', name) };
}

/** /debug/explain?identity=...&node=... or ?workload=NS/POD. */
export function queryFromParams(params: URLSearchParams): ExplainQuery {
  const workload = params.get('workload');
  const identity = params.get('identity');
  const node = params.get('node');
  if (workload !== null && (identity !== null || node !== null))
    throw new ExplainQueryError('ask for workload= or for identity= and node=, not both');
  if (workload !== null) return workloadQuery(workload);
  if (identity === null && node === null)
    throw new ExplainQueryError('give workload=NAMESPACE/POD, or identity=spiffe://... and node=NODE');
  return identityQuery(node ?? undefined, identity ?? undefined);
}
