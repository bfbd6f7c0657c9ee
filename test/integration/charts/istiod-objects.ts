// Typed views of the objects charts/istiod renders, for the chart tests.

import { findObject, type Rendered } from '../../support/helm';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

export interface Container {
  name: string;
  image: string;
  args: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number; protocol: string }[];
  readinessProbe: { httpGet: { path: string; port: number } };
  livenessProbe: { httpGet: { path: string; port: number }; initialDelaySeconds: number; periodSeconds: number; timeoutSeconds: number; failureThreshold: number };
  securityContext: { readOnlyRootFilesystem: boolean; runAsNonRoot: boolean; allowPrivilegeEscalation: boolean; capabilities: { drop: string[] } };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface Volume {
  name: string;
  secret?: { secretName: string; optional?: boolean };
  configMap?: { name: string; optional?: boolean; defaultMode?: number };
  emptyDir?: object;
  projected?: { sources: { serviceAccountToken?: { audience: string; path: string; expirationSeconds: number } }[] };
}

export interface DeploymentView {
  replicas?: number;
  selector: Record<string, string>;
  podLabels: Record<string, string>;
  podSecurityContext: { runAsNonRoot: boolean; runAsUser: number };
  serviceAccountName: string;
  container: Container;
  volumes: Volume[];
}

export function deploymentOf(objects: readonly Rendered[]): DeploymentView {
  const d = findObject(objects, 'Deployment');
  const spec = d['spec'] as {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: { securityContext: DeploymentView['podSecurityContext']; serviceAccountName: string; containers: Container[]; volumes: Volume[] } };
  };
  const containers = spec.template.spec.containers;
  if (containers.length !== 1) throw new Error(`expected one container, found ${containers.length}`);
  return {
    ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
    selector: spec.selector.matchLabels,
    podLabels: spec.template.metadata.labels,
    podSecurityContext: spec.template.spec.securityContext,
    serviceAccountName: spec.template.spec.serviceAccountName,
    container: containers[0]!,
    volumes: spec.template.spec.volumes,
  };
}

/** The container's environment as the kubelet resolves it for a pod in `namespace` named `pod`. */
export function resolvedEnv(container: Container, namespace: string, pod = 'istiod-0'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of container.env) {
    if (e.value !== undefined) out[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') out[e.name] = namespace;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') out[e.name] = pod;
    else throw new Error(`env ${e.name}: a source the test does not resolve`);
  }
  return out;
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort?: number;
  protocol: string;
}

/** Ports of the one Service rendered, or of the Service `name` when revision tags add more. */
export function servicePorts(objects: readonly Rendered[], name?: string): ServicePort[] {
  return (findObject(objects, 'Service', name)['spec'] as { ports: ServicePort[] }).ports;
}

export function serviceSelector(objects: readonly Rendered[], name?: string): Record<string, string> {
  return (findObject(objects, 'Service', name)['spec'] as { selector: Record<string, string> }).selector;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** The name prefix of the reader's ClusterRole (reader-clusterrole.yaml), which binds another account than istiod's. */
export const READER_ROLE_PREFIX = 'istio-reader-clusterrole';

/** The rules of istiod's own ClusterRole or Role (not the reader's, which istiod does not hold). */
export function rulesOf(objects: readonly Rendered[], kind: 'ClusterRole' | 'Role'): PolicyRule[] {
  const own = objects.filter((o) => !(o.kind === 'ClusterRole' && o.metadata.name.startsWith(READER_ROLE_PREFIX)));
  return findObject(own, kind)['rules'] as PolicyRule[];
}

/** The rules of the reader's ClusterRole. */
export function readerRulesOf(objects: readonly Rendered[]): PolicyRule[] {
  const [reader, ...more] = objects.filter((o) => o.kind === 'ClusterRole' && o.metadata.name.startsWith(READER_ROLE_PREFIX));
  if (!reader || more.length > 0) throw new Error(`expected exactly one ${READER_ROLE_PREFIX}* ClusterRole`);
  return reader['rules'] as PolicyRule[];
}

/**
 * Verbs a rule's resourceNames can authorize: the request names one object. The API server
 * authorizes a create before the object's name is known and a list or watch as a collection, so
 * a rule with resourceNames never grants those here (a list or watch with a metadata.name field
 * selector can match one on a real cluster; the code's lists by name get a rule without names).
 */
const NAMED_VERBS = new Set(['get', 'update', 'patch', 'delete']);

export type Call = { verb: string; group: string; resource: string; subresource?: string; name?: string };

/** Whether `rules` grant the call, as Kubernetes RBAC does, resourceNames included. */
export function grants(rules: readonly PolicyRule[], r: Call): boolean {
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  return rules.some(
    (rule) =>
      (rule.apiGroups.includes(r.group) || rule.apiGroups.includes('*')) &&
      (rule.resources.includes(resource) || rule.resources.includes('*')) &&
      (rule.verbs.includes(r.verb) || rule.verbs.includes('*')) &&
      (!rule.resourceNames?.length || (NAMED_VERBS.has(r.verb) && r.name !== undefined && rule.resourceNames.includes(r.name))),
  );
}

/** Every (verb, group, resource, name) a rule grants; name undefined for a rule without resourceNames. */
export function grantsOf(rules: readonly PolicyRule[]): { verb: string; group: string; resource: string; name: string | undefined }[] {
  return rules.flatMap((rule) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((resource) =>
        rule.verbs.flatMap((verb) => (rule.resourceNames?.length ? rule.resourceNames : [undefined]).map((name) => ({ verb, group, resource, name }))),
      ),
    ),
  );
}

/** The requests granted neither by `clusterRules` nor, inside `namespace`, by `roleRules`. */
export function ungranted<R extends Call & { namespace?: string }>(
  requests: readonly R[],
  clusterRules: readonly PolicyRule[],
  roleRules: readonly PolicyRule[],
  namespace: string,
): R[] {
  return requests.filter((r) => !(grants(clusterRules, r) || (r.namespace === namespace && grants(roleRules, r))));
}

/**
 * Every grant of `clusterRules`, and of `roleRules` inside `namespace`, that no request used, as
 * "<kind>: <verb> <group>/<resource> <name>"; `skip` leaves out names a run does not exercise.
 */
export function unusedGrants(
  requests: readonly (Call & { namespace?: string })[],
  clusterRules: readonly PolicyRule[],
  roleRules: readonly PolicyRule[],
  namespace: string,
  skip: (name: string) => boolean = () => false,
): string[] {
  const unused: string[] = [];
  for (const [scope, rules] of [['ClusterRole', clusterRules], ['Role', roleRules]] as const) {
    for (const g of grantsOf(rules)) {
      if (g.name !== undefined && skip(g.name)) continue;
      // A rule names a subresource as "<resource>/<subresource>" (services/status).
      const used = requests.some((r) => r.group === g.group && (r.subresource ? `${r.resource}/${r.subresource}` : r.resource) === g.resource && r.verb === g.verb && (g.name === undefined || r.name === g.name) && (scope === 'ClusterRole' || r.namespace === namespace));
      if (!used) unused.push(`${scope}: ${g.verb} ${g.group || 'core'}/${g.resource}${g.name ? ` ${g.name}` : ''}`);
    }
  }
  return unused;
}
