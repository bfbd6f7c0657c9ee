// Remote secrets as `istioctl create-remote-secret` writes them, for the unit and integration tests
// of the remote-secret controller: a kubeconfig per cluster with a token, base64 in a Secret's data.

import { MULTICLUSTER_SECRET_LABEL } from '../../../src/store/kube/remote-secret';

/** A token nobody would write by chance: the tests look for it where it must never appear. */
export function remoteToken(cluster: string): string {
  return `remote-token-${cluster}-a8f3c1d9e7b24f60`;
}

export interface KubeconfigOptions {
  server: string;
  token?: string;
  /** Fields merged into the user entry (to try unsafe ones). */
  user?: Record<string, unknown>;
  /** Fields merged into the cluster entry. */
  cluster?: Record<string, unknown>;
}

/** The kubeconfig text create-remote-secret writes (YAML; JSON is YAML too). */
export function remoteKubeconfig(clusterId: string, o: KubeconfigOptions): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${clusterId}`,
    '  cluster:',
    `    server: ${o.server}`,
    ...Object.entries(o.cluster ?? {}).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`),
    'contexts:',
    `- name: ${clusterId}`,
    '  context:',
    `    cluster: ${clusterId}`,
    `    user: ${clusterId}`,
    `current-context: ${clusterId}`,
    'users:',
    `- name: ${clusterId}`,
    '  user:',
    `    token: ${o.token ?? remoteToken(clusterId)}`,
    ...Object.entries(o.user ?? {}).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`),
    '',
  ].join('\n');
}

export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** A remote secret in `namespace` holding one kubeconfig per entry of `clusters` (id -> text). */
export function remoteSecret(
  name: string,
  clusters: Record<string, string>,
  namespace = 'istio-system',
  labels: Record<string, string> = { [MULTICLUSTER_SECRET_LABEL]: 'true' },
): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  data: Record<string, string>;
} {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels },
    data: Object.fromEntries(Object.entries(clusters).map(([id, text]) => [id, b64(text)])),
  };
}
