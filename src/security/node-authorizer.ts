// Node authorization: a trusted node agent (ztunnel) may ask for the certificate of another
// identity only when a pod of that identity runs on the agent's own node. The last check is one
// lookup in a store index keyed by (node, namespace/service account).
//
// Every check may write what it read into an optional DecisionTrace (contract/decision.ts) for
// `istiod-ts explain identity`; the CA passes none, so its path reads and decides exactly as before.

import { podNodeName, podServiceAccountName, statusPhase } from '../store/fields';
import type { ObjectStore, KubeObject } from '../store/types';
import type { DecisionTrace } from '../contract/decision';
import type { CallerIdentity } from './identity';
import { parseSpiffeId, type SpiffeIdentity } from './spiffe';

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

/** The service account a pod runs as: spec.serviceAccountName, or "default" as Kubernetes fills in. */
export function serviceAccountOf(pod: KubeObject): string {
  return podServiceAccountName(pod) || 'default';
}

/** The topic of node authorization steps in a decision record. */
export const NODE_AUTH_TOPIC = 'node-authorization';

/**
 * Index function: a scheduled, non-terminal pod is filed under its (node, ns/sa). The store calls it
 * with the pod only; explain passes a trace to say why a pod is filed where it is, or not at all.
 */
export function podNodeServiceAccountKeys(pod: KubeObject, trace?: DecisionTrace): string[] {
  const node = podNodeName(pod);
  const phase = statusPhase(pod);
  trace?.fact(`pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name} spec.nodeName`, node ?? null);
  trace?.fact(`pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name} status.phase`, phase ?? null);
  if (!node || (phase !== undefined && TERMINAL_PHASES.has(phase))) {
    trace?.decide(
      NODE_AUTH_TOPIC,
      node ? 'index.terminal' : 'index.unscheduled',
      node
        ? 'a Failed or Succeeded pod grants no identity on its node'
        : 'a pod not yet bound to a node grants no identity anywhere',
      'not filed: grants nothing',
    );
    return [];
  }
  const key = nodeServiceAccountKey(node, pod.metadata.namespace ?? '', serviceAccountOf(pod));
  trace?.decide(
    NODE_AUTH_TOPIC,
    'index.filed',
    'a scheduled pod that has not finished is filed under (its node, its namespace/service account)',
    `filed under ${key}`,
  );
  return [key];
}

/** Each denial's rule in words, for decision records. */
export const DENIAL_RULES: Record<NodeAuthDenial, string> = {
  impersonation_disabled:
    'no account may ask for certificates of other identities while CA_TRUSTED_NODE_ACCOUNTS is empty',
  caller_not_trusted: 'only a node agent account listed in CA_TRUSTED_NODE_ACCOUNTS may ask for another identity',
  invalid_identity: 'the requested identity must be spiffe://<trust domain>/ns/<namespace>/sa/<service account>',
  untrusted_trust_domain: "the requested identity's trust domain must be the mesh trust domain or one of its aliases",
  caller_pod_unknown: "the caller's token must name its own pod, and that pod must exist",
  caller_pod_mismatch: "the caller's pod must have the token's uid and run as the token's service account",
  caller_pod_terminated: 'a node agent pod that has Failed or Succeeded asks for nothing',
  caller_pod_unscheduled: "the caller's pod must be bound to a node: the node is what it may ask for",
  no_pod_on_node: "a running pod of the requested identity's service account must be on the caller's node",
};

/** One denial, written to the trace as the step that decided. */
function deny(trace: DecisionTrace | undefined, reason: NodeAuthDenial, detail: string): NodeAuthDecision {
  trace?.decide(NODE_AUTH_TOPIC, reason, DENIAL_RULES[reason], `denied: ${detail}`);
  return { allowed: false, reason, detail };
}

/**
 * Whether the (node, ns/sa) index is on the store already: /debug/explain builds its own authorizer
 * over the server's store beside the CA's, and both read the one index.
 */
function hasNodeIndex(store: ObjectStore): boolean {
  try {
    store.byIndex('Pod', NODE_SA_INDEX, '');
    return true;
  } catch {
    return false;
  }
}

export interface NodeAuthorizerOptions {
  /** CA_TRUSTED_NODE_ACCOUNTS as "ns/sa" entries; empty disables impersonation. */
  trustedAccounts: readonly string[];
  /** The mesh trust domain and its aliases. */
  trustDomains: () => readonly string[];
}

export class NodeAuthorizer {
  private readonly trusted: ReadonlySet<string>;

  /** Registers the index on `store` unless an authorizer over the same store did. */
  constructor(
    private readonly store: ObjectStore,
    private readonly opts: NodeAuthorizerOptions,
  ) {
    this.trusted = new Set(opts.trustedAccounts);
    if (!hasNodeIndex(store)) store.addIndex('Pod', NODE_SA_INDEX, podNodeServiceAccountKeys);
  }

  /**
   * Checks in istiod's order whether `caller` may obtain a certificate for `requested`. With a trace,
   * every check writes the facts it read and its outcome (explain); the CA passes none.
   */
  authorize(caller: CallerIdentity, requested: string, trace?: DecisionTrace): NodeAuthDecision {
    const callerAccount = `${caller.namespace}/${caller.serviceAccount}`;
    trace?.fact('CA_TRUSTED_NODE_ACCOUNTS', [...this.trusted]);
    if (this.trusted.size === 0) return deny(trace, 'impersonation_disabled', 'CA_TRUSTED_NODE_ACCOUNTS is empty');
    trace?.fact('caller account', callerAccount);
    if (!this.trusted.has(callerAccount))
      return deny(trace, 'caller_not_trusted', `caller ${callerAccount} is not in CA_TRUSTED_NODE_ACCOUNTS`);
    trace?.decide(NODE_AUTH_TOPIC, 'caller.trusted', DENIAL_RULES.caller_not_trusted, `passed: ${callerAccount}`);
    const target = this.target(requested, trace);
    if (!('trustDomain' in target)) return target;
    trace?.fact('caller pod (from the token)', caller.podName ? `${caller.namespace}/${caller.podName}` : null);
    trace?.fact('caller pod uid (from the token)', caller.podUid ?? null);
    if (!caller.podName || !caller.podUid)
      return deny(trace, 'caller_pod_unknown', `caller ${callerAccount} presented no pod name and uid`);
    const pod = this.store.get('Pod', caller.namespace, caller.podName);
    trace?.fact(`pod ${caller.namespace}/${caller.podName} exists`, pod !== undefined);
    if (!pod)
      return deny(trace, 'caller_pod_unknown', `caller pod ${caller.namespace}/${caller.podName} does not exist`);
    trace?.fact(`pod ${caller.namespace}/${caller.podName} metadata.uid`, pod.metadata.uid ?? null);
    trace?.fact(`pod ${caller.namespace}/${caller.podName} service account`, serviceAccountOf(pod));
    if (pod.metadata.uid !== caller.podUid) {
      return deny(
        trace,
        'caller_pod_mismatch',
        `caller pod ${caller.namespace}/${caller.podName} has uid ${pod.metadata.uid ?? '(none)'}, token says ${caller.podUid}`,
      );
    }
    if (serviceAccountOf(pod) !== caller.serviceAccount) {
      return deny(
        trace,
        'caller_pod_mismatch',
        `caller pod ${caller.namespace}/${caller.podName} runs as ${serviceAccountOf(pod)}, token says ${caller.serviceAccount}`,
      );
    }
    // A pod that has Failed (or Succeeded) runs no node agent any more, whatever its token says;
    // istiod's node authorizer does not see such a pod at all.
    const phase = statusPhase(pod);
    trace?.fact(`pod ${caller.namespace}/${caller.podName} status.phase`, phase ?? null);
    if (phase !== undefined && TERMINAL_PHASES.has(phase)) {
      return deny(
        trace,
        'caller_pod_terminated',
        `caller pod ${caller.namespace}/${caller.podName} is in phase ${phase}`,
      );
    }
    const node = podNodeName(pod);
    trace?.fact(`pod ${caller.namespace}/${caller.podName} spec.nodeName`, node ?? null);
    if (!node)
      return deny(
        trace,
        'caller_pod_unscheduled',
        `caller pod ${caller.namespace}/${caller.podName} is not bound to a node`,
      );
    trace?.decide(
      NODE_AUTH_TOPIC,
      'caller.pod',
      'the caller is the running node agent pod its token names, bound to a node',
      `passed: node ${node}`,
    );
    return this.grants(node, target, trace);
  }

  /**
   * The checks that do not depend on the caller, for a node agent on `node`: impersonation enabled,
   * the identity well formed and in the mesh, and a pod of it on the node. `explain identity --node`
   * runs this when no node agent pod runs on the node to ask as; authorize() shares every step.
   */
  authorizeOnNode(node: string, requested: string, trace?: DecisionTrace): NodeAuthDecision {
    trace?.fact('CA_TRUSTED_NODE_ACCOUNTS', [...this.trusted]);
    if (this.trusted.size === 0) return deny(trace, 'impersonation_disabled', 'CA_TRUSTED_NODE_ACCOUNTS is empty');
    trace?.decide(NODE_AUTH_TOPIC, 'impersonation.enabled', DENIAL_RULES.impersonation_disabled, 'passed');
    const target = this.target(requested, trace);
    return 'trustDomain' in target ? this.grants(node, target, trace) : target;
  }

  /** The requested identity, parsed and in a mesh trust domain, or the denial saying why not. */
  private target(requested: string, trace: DecisionTrace | undefined): SpiffeIdentity | NodeAuthDecision {
    trace?.fact('requested identity', requested);
    let target;
    try {
      target = parseSpiffeId(requested);
    } catch (err) {
      return deny(trace, 'invalid_identity', (err as Error).message);
    }
    const domains = this.opts.trustDomains();
    trace?.fact('mesh trust domain and aliases', domains);
    if (!domains.includes(target.trustDomain)) {
      return deny(
        trace,
        'untrusted_trust_domain',
        `trust domain ${target.trustDomain} is not the mesh trust domain or an alias`,
      );
    }
    trace?.decide(
      NODE_AUTH_TOPIC,
      'identity.in-mesh',
      DENIAL_RULES.untrusted_trust_domain,
      `passed: ${target.namespace}/${target.serviceAccount} in ${target.trustDomain}`,
    );
    return target;
  }

  /** The last check: one index lookup of (node, namespace/service account). */
  private grants(node: string, target: SpiffeIdentity, trace: DecisionTrace | undefined): NodeAuthDecision {
    const key = nodeServiceAccountKey(node, target.namespace, target.serviceAccount);
    const pods = this.store.byIndex('Pod', NODE_SA_INDEX, key);
    trace?.fact(
      `pods filed under ${key}`,
      pods.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`),
    );
    if (pods.length === 0)
      return deny(
        trace,
        'no_pod_on_node',
        `no running pod of ${target.namespace}/${target.serviceAccount} on node ${node}`,
      );
    trace?.decide(NODE_AUTH_TOPIC, 'identity.on-node', DENIAL_RULES.no_pod_on_node, `allowed on node ${node}`);
    return { allowed: true, node };
  }
}
