// The remote cluster's side of `create-remote-secret`: the service account whose token the primary
// uses, its read-only RBAC, and a legacy token Secret for it, which kube-controller-manager fills.
// Every call goes through KubeWriter, the one write path to an API server. The steps are
// istioctl's: find or create the account, find a token Secret that names it or create one, wait
// for its token and CA. Nothing read here is logged: the token is a credential to the remote cluster.

import { KINDS } from '../store/kinds';
import { REMOTE_KINDS } from '../store/clusters';
import type { KubeWriter, ObjectRef } from '../store/kube/writes';
import type { KubeObject } from '../store/types';

/** The account a primary reads a remote cluster as (Istio's name, rendered by charts/base). */
export const READER_SERVICE_ACCOUNT = 'istio-reader-service-account';
/** `--type config`: the account an external control plane reads its config cluster as. */
export const CONFIG_SERVICE_ACCOUNT = 'istiod';
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * Exactly what a primary does on a remote cluster: it watches the kinds a remote contributes
 * (store/clusters.ts REMOTE_KINDS) and reviews the tokens of the remote's ztunnels. Derived from
 * REMOTE_KINDS so a kind added there is granted here; charts/istiod's reader ClusterRole renders
 * the same rules (test/integration/charts/istiod-remote-profile.test.ts).
 */
export function readerRules(): PolicyRule[] {
  const byGroup = new Map<string, string[]>();
  for (const id of REMOTE_KINDS) {
    const { group, plural } = KINDS[id];
    byGroup.set(group, [...(byGroup.get(group) ?? []), plural]);
  }
  return [
    ...[...byGroup].map(([group, resources]) => ({ apiGroups: [group], resources, verbs: ['list', 'watch'] })),
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  ];
}

/** Istio's name for the reader's ClusterRole and its binding: one per control-plane namespace. */
export const readerClusterRoleName = (namespace: string) => `istio-reader-clusterrole-${namespace}`;
/** Istio's name for the token Secret it creates, so istioctl and istiod-ts find each other's. */
export const tokenSecretName = (serviceAccount: string) => `${serviceAccount}-istio-remote-secret-token`;

const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces' };
const SERVICE_ACCOUNTS = { group: '', version: 'v1', plural: 'serviceaccounts' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };
const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles' };
const CLUSTER_ROLE_BINDINGS = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings' };

/** A failure the operator can act on; the command prints its message as it is. */
export class RemoteSecretError extends Error {
  override name = 'RemoteSecretError';
}

export interface AccountOptions {
  namespace: string;
  serviceAccount: string;
  createServiceAccount: boolean;
  /** --secret-name: use this token Secret, which must name the account. */
  secretName: string;
}

/** The cluster's name when --name is not given: the uid of kube-system, as istioctl names it. */
export async function clusterUid(writer: KubeWriter): Promise<string> {
  const ns = await writer.get({ ...NAMESPACES, name: 'kube-system' });
  const uid = ns?.metadata.uid;
  if (!uid)
    throw new RemoteSecretError('--name is not given and namespace kube-system has no uid to name the cluster by');
  return uid;
}

/** Reads the account, creating it (with the reader's RBAC) when allowed and it is the reader. */
export async function ensureServiceAccount(writer: KubeWriter, o: AccountOptions): Promise<KubeObject> {
  const ref = { ...SERVICE_ACCOUNTS, namespace: o.namespace, name: o.serviceAccount };
  const existing = await writer.get(ref);
  if (existing) return existing;
  const where = `${o.namespace}/${o.serviceAccount}`;
  if (!o.createServiceAccount)
    throw new RemoteSecretError(
      `service account ${where} does not exist on the remote cluster; install charts/base there ` +
        '(or charts/istiod with profile=remote), or run with --create-service-account=true',
    );
  // istioctl creates only the reader's objects, whatever account was asked for; so do we, and say
  // so, rather than invent RBAC for an account whose purpose we do not know.
  if (o.serviceAccount !== READER_SERVICE_ACCOUNT)
    throw new RemoteSecretError(
      `service account ${where} does not exist on the remote cluster; --create-service-account creates ` +
        `only ${READER_SERVICE_ACCOUNT}: create ${o.serviceAccount} and its RBAC first`,
    );
  await createReader(writer, o.namespace);
  const created = await writer.get(ref);
  if (!created) throw new RemoteSecretError(`service account ${where} was created but cannot be read back`);
  return created;
}

/**
 * Creates the object unless it exists, which is read first: a user allowed to use an existing
 * namespace (or a role Helm installed) need not be allowed to create one, as with istioctl.
 */
async function createUnlessPresent(writer: KubeWriter, ref: ObjectRef, body: object): Promise<void> {
  if ((await writer.get(ref)) === undefined) await writer.createIfAbsent(ref, body);
}

/** The namespace, the reader account and its ClusterRole and binding; what exists is left as it is (Helm may own it). */
async function createReader(writer: KubeWriter, namespace: string): Promise<void> {
  const labels = { app: 'istio-reader', 'app.kubernetes.io/name': 'istio-reader' };
  const roleName = readerClusterRoleName(namespace);
  await createUnlessPresent(
    writer,
    { ...NAMESPACES, name: namespace },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
  );
  await writer.createIfAbsent(
    { ...SERVICE_ACCOUNTS, namespace, name: READER_SERVICE_ACCOUNT },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: READER_SERVICE_ACCOUNT, namespace, labels } },
  );
  await createUnlessPresent(
    writer,
    { ...CLUSTER_ROLES, name: roleName },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: roleName, labels },
      rules: readerRules(),
    },
  );
  await createUnlessPresent(
    writer,
    { ...CLUSTER_ROLE_BINDINGS, name: roleName },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: roleName, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ kind: 'ServiceAccount', name: READER_SERVICE_ACCOUNT, namespace }],
    },
  );
}

function namesAccount(secret: KubeObject, serviceAccount: string): boolean {
  return (
    secret['type'] === SERVICE_ACCOUNT_TOKEN_TYPE &&
    secret.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] === serviceAccount
  );
}

/**
 * The token Secret to read: --secret-name's, else the first in the namespace that names the
 * account, else a new one. Since Kubernetes 1.24 no such Secret is made for an account unasked.
 */
export async function findOrCreateTokenSecret(writer: KubeWriter, o: AccountOptions): Promise<KubeObject> {
  if (o.secretName !== '') {
    const secret = await writer.get({ ...SECRETS, namespace: o.namespace, name: o.secretName });
    if (!secret) throw new RemoteSecretError(`--secret-name: secret ${o.namespace}/${o.secretName} does not exist`);
    if (!namesAccount(secret, o.serviceAccount))
      throw new RemoteSecretError(
        `--secret-name: secret ${o.namespace}/${o.secretName} is not a ${SERVICE_ACCOUNT_TOKEN_TYPE} Secret of service account ${o.serviceAccount}`,
      );
    return secret;
  }
  const { items } = await writer.list({ ...SECRETS, namespace: o.namespace }, {});
  const found = items.find((s) => namesAccount(s, o.serviceAccount));
  if (found) return found;
  const name = tokenSecretName(o.serviceAccount);
  const { object } = await writer.createIfAbsent(
    { ...SECRETS, namespace: o.namespace, name },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: SERVICE_ACCOUNT_TOKEN_TYPE,
      metadata: { name, namespace: o.namespace, annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: o.serviceAccount } },
    },
  );
  if (!namesAccount(object, o.serviceAccount))
    throw new RemoteSecretError(
      `secret ${o.namespace}/${name} exists and is not a token Secret of service account ${o.serviceAccount}; delete it or pass --secret-name`,
    );
  return object;
}

export interface TokenData {
  caData: Buffer;
  /** Undefined when only the CA was asked for (plugin authentication). */
  token?: Buffer;
}

function tokenDataOf(secret: KubeObject, needToken: boolean): TokenData | undefined {
  // A field of another JSON type reads as absent, as does an empty one: the controller has not written it.
  const field = (key: string) => {
    const value: unknown = secret.data?.[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const ca = field('ca.crt');
  const token = field('token');
  if (ca === undefined || (needToken && token === undefined)) return undefined;
  return {
    caData: Buffer.from(ca, 'base64'),
    ...(needToken && token !== undefined ? { token: Buffer.from(token, 'base64') } : {}),
  };
}

/** Waits for kube-controller-manager to fill the Secret with the account's token and the cluster's CA. */
export async function waitForTokenData(
  writer: KubeWriter,
  secret: KubeObject,
  needToken: boolean,
  timeoutMs: number,
  pollMs = 250,
): Promise<TokenData> {
  const { name, namespace = '' } = secret.metadata;
  const deadline = Date.now() + timeoutMs;
  for (let current: KubeObject | undefined = secret; ;) {
    const data = current ? tokenDataOf(current, needToken) : undefined;
    if (data) return data;
    if (Date.now() >= deadline) {
      const missing = needToken ? '"token" and "ca.crt"' : '"ca.crt"';
      throw new RemoteSecretError(
        current
          ? `secret ${namespace}/${name} has no ${missing} data after ${timeoutMs} ms: the cluster's token controller ` +
              '(kube-controller-manager) fills legacy token Secrets; check that it runs and that the service account exists'
          : `secret ${namespace}/${name} disappeared while waiting for its token (the token controller deletes a ` +
              'token Secret whose service account does not exist)',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
    current = await writer.get({ ...SECRETS, namespace, name });
  }
}
