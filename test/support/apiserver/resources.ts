// The resources the test API server serves: every kind of src/store/kinds.ts (the store's kinds and
// the controllers' own, such as Secrets) plus what istiod-ts writes or calls (Leases, TokenReviews,
// webhook configurations, CRDs), and what `create-remote-secret` writes on a remote cluster
// (ServiceAccounts, ClusterRoles and their bindings).

import { KINDS } from '../../../src/store/kinds';

export interface ServedResource {
  group: string;
  /** Every version the server answers for; the first is the storage version. */
  versions: readonly string[];
  plural: string;
  kind: string;
  namespaced: boolean;
  /** Custom resources carry apiVersion/kind on list items; built-in kinds do not. */
  crd: boolean;
  /** Only create is allowed (TokenReview): nothing is stored. */
  createOnly?: boolean;
  /** Subresources accepted on PUT/PATCH. */
  subresources: readonly string[];
}

const fromKinds: ServedResource[] = Object.values(KINDS).map((info) => ({
  group: info.group,
  versions: info.versions,
  plural: info.plural,
  kind: info.kind,
  namespaced: info.namespaced,
  crd: info.crd,
  subresources:
    info.id === 'Namespace' || info.id === 'Node' || info.id === 'Pod' || info.id === 'Service' || info.crd
      ? ['status']
      : [],
}));

export const SERVED_RESOURCES: readonly ServedResource[] = [
  ...fromKinds,
  {
    group: '',
    versions: ['v1'],
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    crd: false,
    subresources: [],
  },
  {
    group: 'rbac.authorization.k8s.io',
    versions: ['v1'],
    plural: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
    crd: false,
    subresources: [],
  },
  {
    group: 'rbac.authorization.k8s.io',
    versions: ['v1'],
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
    crd: false,
    subresources: [],
  },
  {
    group: 'coordination.k8s.io',
    versions: ['v1'],
    plural: 'leases',
    kind: 'Lease',
    namespaced: true,
    crd: false,
    subresources: [],
  },
  {
    group: 'authentication.k8s.io',
    versions: ['v1'],
    plural: 'tokenreviews',
    kind: 'TokenReview',
    namespaced: false,
    crd: false,
    createOnly: true,
    subresources: [],
  },
  {
    group: 'admissionregistration.k8s.io',
    versions: ['v1'],
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
    crd: false,
    subresources: [],
  },
  {
    group: 'admissionregistration.k8s.io',
    versions: ['v1'],
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
    crd: false,
    subresources: [],
  },
  {
    group: 'apiextensions.k8s.io',
    versions: ['v1'],
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    crd: false,
    subresources: ['status'],
  },
];

/** "group/plural", the key of a resource in the server's tables ("" group for core). */
export function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

export function findResource(group: string, version: string, plural: string): ServedResource | undefined {
  return SERVED_RESOURCES.find((r) => r.group === group && r.plural === plural && r.versions.includes(version));
}

export function findResourceByKind(apiVersion: string, kind: string): ServedResource | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return SERVED_RESOURCES.find((r) => r.group === group && r.kind === kind && r.versions.includes(version));
}

export function apiVersionFor(resource: ServedResource, version = resource.versions[0]!): string {
  return resource.group === '' ? version : `${resource.group}/${version}`;
}
