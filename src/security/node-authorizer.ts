// Node authorization: a trusted node agent (ztunnel) may ask for the certificate of another
// identity only when a pod of that identity runs on the agent's own node. The last check is one
// lookup in a store index keyed by (node, namespace/service account).

import { podNodeName, podServiceAccountName, statusPhase } from '../store/fields';
import type { ObjectStore, KubeObject } from '../store/types';
import type { CallerIdentity } from './identity';
import { parseSpiffeId } from './spiffe';

export const NODE_SA_INDEX = 'ca.node-serviceaccount';

export type NodeAuthDenial =
  | 'impersonation_disabled'
  | 'caller_not_trusted'
  | 'invalid_identity'
  | 'untrusted_trust_domain'
  | 'caller_pod_unknown'
  | 'caller_pod_mismatch'
  | 'caller_pod_terminated'
  | 'caller_pod_unscheduled'
  | 'no_pod_on_node';

export type NodeAuthDecision =
  { allowed: true; node: string } | { allowed: false; reason: NodeAuthDenial; detail: string };

const TERMINAL_PHASES = new Set(['Failed', 'Succeeded']);

export function nodeServiceAccountKey(node: string, namespace: string, serviceAccount: string): string {
  return `${node}/${namespace}/${serviceAccount}`;
}

function serviceAccountOf(pod: KubeObject): string {
  return podServiceAccountName(pod) || 'default';
}

/** Index function: a scheduled, non-terminal pod is filed under its (node, ns/sa). */
export function podNodeServiceAccountKeys(pod: KubeObject): string[] {
  const node = podNodeName(pod);
  const phase = statusPhase(pod);
  if (!node || (phase !== undefined && TERMINAL_PHASES.has(phase))) return [];
  return [nodeServiceAccountKey(node, pod.metadata.namespace ?? '', serviceAccountOf(pod))];
}

export interface NodeAuthorizerOptions {
  /** CA_TRUSTED_NODE_ACCOUNTS as "ns/sa" entries; empty disables impersonation. */
  trustedAccounts: readonly string[];
  /** The mesh trust domain and its aliases. */
  trustDomains: () => readonly string[];
}

export class NodeAuthorizer {
  private readonly trusted: ReadonlySet<string>;

  /** Registers the index on `store`; create one authorizer per store. */
  constructor(
    private readonly store: ObjectStore,
    private readonly opts: NodeAuthorizerOptions,
  ) {
    this.trusted = new Set(opts.trustedAccounts);
    store.addIndex('Pod', NODE_SA_INDEX, podNodeServiceAccountKeys);
  }

  /** Checks in istiod's order whether `caller` may obtain a certificate for `requested`. */
  authorize(caller: CallerIdentity, requested: string): NodeAuthDecision {
    const callerAccount = `${caller.namespace}/${caller.serviceAccount}`;
    if (this.trusted.size === 0)
      return { allowed: false, reason: 'impersonation_disabled', detail: 'CA_TRUSTED_NODE_ACCOUNTS is empty' };
    if (!this.trusted.has(callerAccount)) {
      return {
        allowed: false,
        reason: 'caller_not_trusted',
        detail: `caller ${callerAccount} is not in CA_TRUSTED_NODE_ACCOUNTS`,
      };
    }
    let target;
    try {
      target = parseSpiffeId(requested);
    } catch (err) {
      return { allowed: false, reason: 'invalid_identity', detail: (err as Error).message };
    }
    if (!this.opts.trustDomains().includes(target.trustDomain)) {
      return {
        allowed: false,
        reason: 'untrusted_trust_domain',
        detail: `trust domain ${target.trustDomain} is not the mesh trust domain or an alias`,
      };
    }
    if (!caller.podName || !caller.podUid) {
      return {
        allowed: false,
        reason: 'caller_pod_unknown',
        detail: `caller ${callerAccount} presented no pod name and uid`,
      };
    }
    const pod = this.store.get('Pod', caller.namespace, caller.podName);
    if (!pod)
      return {
        allowed: false,
        reason: 'caller_pod_unknown',
        detail: `caller pod ${caller.namespace}/${caller.podName} does not exist`,
      };
    if (pod.metadata.uid !== caller.podUid) {
      return {
        allowed: false,
        reason: 'caller_pod_mismatch',
        detail: `caller pod ${caller.namespace}/${caller.podName} has uid ${pod.metadata.uid ?? '(none)'}, token says ${caller.podUid}`,
      };
    }
    if (serviceAccountOf(pod) !== caller.serviceAccount) {
      return {
        allowed: false,
        reason: 'caller_pod_mismatch',
        detail: `caller pod ${caller.namespace}/${caller.podName} runs as ${serviceAccountOf(pod)}, token says ${caller.serviceAccount}`,
      };
    }
    // A pod that has Failed (or Succeeded) runs no node agent any more, whatever its token says;
    // istiod's node authorizer does not see such a pod at all.
    const phase = statusPhase(pod);
    if (phase !== undefined && TERMINAL_PHASES.has(phase)) {
      return {
        allowed: false,
        reason: 'caller_pod_terminated',
        detail: `caller pod ${caller.namespace}/${caller.podName} is in phase ${phase}`,
      };
    }
    const node = podNodeName(pod);
    if (!node)
      return {
        allowed: false,
        reason: 'caller_pod_unscheduled',
        detail: `caller pod ${caller.namespace}/${caller.podName} is not bound to a node`,
      };
    const key = nodeServiceAccountKey(node, target.namespace, target.serviceAccount);
    if (this.store.byIndex('Pod', NODE_SA_INDEX, key).length === 0) {
      return {
        allowed: false,
        reason: 'no_pod_on_node',
        detail: `no running pod of ${target.namespace}/${target.serviceAccount} on node ${node}`,
      };
    }
    return { allowed: true, node };
  }
}
