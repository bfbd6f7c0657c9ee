// explain: runs the deciding code itself with a DecisionRecorder (contract/decision.ts) and returns
// what it read and decided. The node authorization is NodeAuthorizer.authorize (as the CA calls it)
// and the workload is podWorkload (as the ambient index calls it); the few steps recorded here are
// marked `explain.*` and only say which question was put to that code, never decide.

import { DecisionRecorder, type DecisionStep } from '../contract/decision';
import { podWorkload } from '../ambient/workloads';
import { addressToJson, encodeAddress } from '../ambient/codec';
import { convertAuthorizationPolicy } from '../ambient/authorization';
import { AuthzAction, AuthzScope, TunnelProtocol } from '../ambient/messages';
import type { AmbientSettings } from '../ambient/settings';
import { registerIndexes, StoreView } from '../ambient/store-view';
import type { CallerIdentity } from '../security/identity';
import {
  NODE_AUTH_TOPIC,
  NODE_SA_INDEX,
  NodeAuthorizer,
  type NodeAuthDenial,
  nodeServiceAccountKey,
  podNodeServiceAccountKeys,
  serviceAccountOf,
} from '../security/node-authorizer';
import { parseSpiffeId, spiffeId } from '../security/spiffe';
import type { KubeObject, ObjectStore } from '../store/types';
import type { ExplainQuery } from './query';

/** The label the node agent (istio-cni) reads to enrol pods; istiod never does. */
export const DATAPLANE_MODE_LABEL = 'istio.io/dataplane-mode';

/**
 * Most pods of the requested service account a denial's record walks to say why none grants the
 * identity: enough for any Deployment an operator reads line by line; the rest are counted.
 */
export const MAX_EXPLAINED_PODS = 50;

/**
 * Most namespace- and mesh-wide AuthorizationPolicies a workload's record lists: a namespace rarely
 * has more than a handful; the rest are counted.
 */
export const MAX_EXPLAINED_SCOPED_POLICIES = 50;

interface RecordBase {
  steps: DecisionStep[];
  /** Steps and facts past the recorder's limits (contract/decision.ts), counted, not kept. */
  omittedSteps: number;
  omittedFacts: number;
}

export interface IdentityRecord extends RecordBase {
  kind: 'identity';
  node: string;
  identity: string;
  allowed: boolean;
  /** The node agent pod explain asked as; absent when none runs on the node. */
  askedAs?: string;
  reason?: NodeAuthDenial;
  detail?: string;
}

export interface WorkloadRecord extends RecordBase {
  kind: 'workload';
  namespace: string;
  name: string;
  /** Whether ztunnel is sent a workload for this pod. */
  found: boolean;
  protocol?: string;
  services?: string[];
  waypoint?: string;
  authorizationPolicies?: string[];
  /** Policies without a selector that ztunnel applies to it by scope (its namespace's, the root namespace's). */
  scopedPolicies?: string[];
  /** The Workload as ztunnel gets it (protobuf JSON, IPs as text), as /debug/ambient/workloads shows it. */
  resource?: Record<string, unknown>;
}

export type ExplainRecord = IdentityRecord | WorkloadRecord;

export interface ExplainerDeps {
  store: ObjectStore;
  /** CA_TRUSTED_NODE_ACCOUNTS as "ns/sa", as the CA reads it. */
  trustedAccounts: readonly string[];
  /** The mesh trust domain and its aliases, as the CA reads them. */
  trustDomains: () => readonly string[];
  /** The ambient index's settings (its view's cluster id, domain, root namespace, revision). */
  ambientSettings: () => AmbientSettings;
}

export class Explainer {
  private readonly authorizer: NodeAuthorizer;

  constructor(private readonly deps: ExplainerDeps) {
    // Both share the indexes already on the store when the CA and the ambient index run beside us.
    this.authorizer = new NodeAuthorizer(deps.store, {
      trustedAccounts: deps.trustedAccounts,
      trustDomains: deps.trustDomains,
    });
    registerIndexes(deps.store);
  }

  explain(query: ExplainQuery): ExplainRecord {
    return query.kind === 'identity'
      ? this.identity(query.node, query.identity)
      : this.workload(query.namespace, query.name);
  }

  /** Whether a ztunnel on `node` would get a certificate for `identity`, and every check on the way. */
  identity(node: string, identity: string): IdentityRecord {
    const rec = new DecisionRecorder();
    const { store } = this.deps;
    rec.fact(`Node ${node} exists`, store.get('Node', undefined, node) !== undefined);
    const agent = this.nodeAgent(node);
    rec.fact(`pods of CA_TRUSTED_NODE_ACCOUNTS on ${node}`, agent ? [podRef(agent)] : []);
    let decision;
    if (agent) {
      rec.decide(
        NODE_AUTH_TOPIC,
        'explain.caller',
        "explain asks as the node's agent pod, with the pod name and uid its token carries",
        `asking as ${podRef(agent)}`,
      );
      decision = this.authorizer.authorize(callerOf(agent, this.deps.trustDomains()[0] ?? ''), identity, rec);
    } else {
      rec.decide(
        NODE_AUTH_TOPIC,
        'explain.no-caller',
        "no node agent pod runs on the node: explain runs the checks that do not depend on the caller's pod",
        'caller checks skipped',
      );
      decision = this.authorizer.authorizeOnNode(node, identity, rec);
    }
    if (!decision.allowed && decision.reason === 'no_pod_on_node') this.whyNoPod(identity, rec);
    return {
      kind: 'identity',
      node,
      identity,
      allowed: decision.allowed,
      ...(agent ? { askedAs: podRef(agent) } : {}),
      ...(decision.allowed ? {} : { reason: decision.reason, detail: decision.detail }),
      steps: rec.steps,
      omittedSteps: rec.omittedSteps,
      omittedFacts: rec.omittedFacts,
    };
  }

  /** Why the ambient index sends `namespace/name` the workload it does: protocol, services, waypoint, policies. */
  workload(namespace: string, name: string): WorkloadRecord {
    const rec = new DecisionRecorder();
    const { store } = this.deps;
    const pod = store.get('Pod', namespace, name);
    const base = { kind: 'workload' as const, namespace, name };
    if (!pod) {
      rec.fact(`Pod ${namespace}/${name} exists`, false);
      rec.decide('workload', 'explain.no-pod', 'a workload is derived from a pod of that name', 'no workload');
      return { ...base, found: false, ...counts(rec) };
    }
    const view = new StoreView(store, this.deps.ambientSettings());
    const w = podWorkload(pod, view, rec);
    // Context, not a rule: what enrols a pod is the node agent's business; istiod sees its annotation.
    rec.fact(`pod label ${DATAPLANE_MODE_LABEL}`, pod.metadata.labels?.[DATAPLANE_MODE_LABEL] ?? null);
    rec.fact(
      `namespace label ${DATAPLANE_MODE_LABEL}`,
      store.get('Namespace', undefined, namespace)?.metadata.labels?.[DATAPLANE_MODE_LABEL] ?? null,
    );
    rec.decide(
      'protocol',
      'explain.dataplane-mode',
      `istiod never reads ${DATAPLANE_MODE_LABEL}: the node agent (istio-cni) does, and marks the pods it redirects with the annotation above`,
      'context only',
    );
    if (!w) return { ...base, found: false, ...counts(rec) };
    const scopedPolicies = this.scopedPolicies(view, namespace, rec);
    const resource = addressToJson(encodeAddress({ workload: w })).workload as Record<string, unknown> | undefined;
    const waypoint = resource?.['waypoint'] as
      { hostname?: { hostname?: string }; address?: { address?: string } } | undefined;
    return {
      ...base,
      found: true,
      protocol: TunnelProtocol[w.tunnelProtocol ?? TunnelProtocol.NONE] + (w.nativeTunnel ? ' (native)' : ''),
      services: Object.keys(w.services ?? {}),
      ...(waypoint ? { waypoint: waypoint.hostname?.hostname ?? waypoint.address?.address ?? '' } : {}),
      authorizationPolicies: w.authorizationPolicies ?? [],
      scopedPolicies,
      ...(resource ? { resource } : {}),
      ...counts(rec),
    };
  }

  /**
   * Context, not a rule of the workload: policies without a selector are not listed on it, ztunnel
   * applies them by scope. Their scope comes from convertAuthorizationPolicy, as the index sends it.
   */
  private scopedPolicies(view: StoreView, namespace: string, rec: DecisionRecorder): string[] {
    const { rootNamespace, enableDryRun } = view.settings;
    const out: string[] = [];
    let seen = 0;
    const namespaces = namespace === rootNamespace ? [namespace] : [namespace, rootNamespace];
    for (const ns of namespaces)
      for (const ap of view.list('AuthorizationPolicy', ns)) {
        const a = convertAuthorizationPolicy(ap, rootNamespace, enableDryRun);
        if (!a || (a.scope ?? AuthzScope.GLOBAL) === AuthzScope.WORKLOAD_SELECTOR) continue;
        if (++seen > MAX_EXPLAINED_SCOPED_POLICIES) continue;
        const action = AuthzAction[a.action ?? AuthzAction.ALLOW];
        out.push(`${ns}/${ap.metadata.name} (${AuthzScope[a.scope ?? AuthzScope.GLOBAL]}, ${action})`);
      }
    rec.fact(`AuthorizationPolicies without a selector in ${namespaces.join(' and ')}`, out);
    rec.decide(
      'policies',
      'explain.scoped-policies',
      'a policy without a selector is not listed on the workload: ztunnel applies it to every workload of its namespace (NAMESPACE) or, in the root namespace, of the mesh (GLOBAL)',
      seen === 0
        ? 'none'
        : `${seen} apply by scope${seen > MAX_EXPLAINED_SCOPED_POLICIES ? ` (first ${MAX_EXPLAINED_SCOPED_POLICIES} shown)` : ''}`,
    );
    return out;
  }

  /** The first running pod of a trusted node agent account on `node`, found in the CA's own index. */
  private nodeAgent(node: string): KubeObject | undefined {
    for (const account of this.deps.trustedAccounts) {
      const [ns = '', sa = ''] = account.split('/');
      const [pod] = this.deps.store.byIndex('Pod', NODE_SA_INDEX, nodeServiceAccountKey(node, ns, sa));
      if (pod) return pod;
    }
    return undefined;
  }

  /** A no_pod_on_node denial: each pod of the account, and where the index function files it, or why not. */
  private whyNoPod(identity: string, rec: DecisionRecorder): void {
    const { namespace, serviceAccount } = parseSpiffeId(identity);
    const account = `${namespace}/${serviceAccount}`;
    let seen = 0;
    for (const pod of this.deps.store.list('Pod', namespace)) {
      if (serviceAccountOf(pod) !== serviceAccount) continue;
      if (++seen > MAX_EXPLAINED_PODS) continue;
      podNodeServiceAccountKeys(pod, rec);
    }
    rec.fact(`pods of ${account}`, seen);
    rec.fact(`Namespace ${namespace} exists`, this.deps.store.get('Namespace', undefined, namespace) !== undefined);
    rec.decide(
      NODE_AUTH_TOPIC,
      'explain.pods-of-account',
      'the pods of the account, filed by the same index function the CA looks up (above, one step each)',
      seen === 0
        ? `no pod runs as ${account}`
        : `${seen} pod(s) of ${account}, none filed under the node${seen > MAX_EXPLAINED_PODS ? ` (first ${MAX_EXPLAINED_PODS} shown)` : ''}`,
    );
  }
}

function podRef(pod: KubeObject): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
}

/** The caller a node agent pod's token makes: its account, pod name and uid (as TokenReview returns them). */
function callerOf(pod: KubeObject, trustDomain: string): CallerIdentity {
  const namespace = pod.metadata.namespace ?? '';
  const serviceAccount = serviceAccountOf(pod);
  return {
    identities: [spiffeId(trustDomain, namespace, serviceAccount)],
    namespace,
    serviceAccount,
    podName: pod.metadata.name,
    ...(pod.metadata.uid ? { podUid: pod.metadata.uid } : {}),
    via: 'token',
  };
}

function counts(rec: DecisionRecorder): RecordBase {
  return { steps: rec.steps, omittedSteps: rec.omittedSteps, omittedFacts: rec.omittedFacts };
}
