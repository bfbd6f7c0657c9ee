// kube-controller-manager's token controller, for tests that create legacy service account token
// Secrets (`create-remote-secret` on a cluster of Kubernetes 1.24 or later): a Secret of type
// kubernetes.io/service-account-token naming an existing ServiceAccount is filled, a little later
// than its creation as on a real cluster, with `token`, `ca.crt` and `namespace`, and the token
// authenticates as that service account in TokenReviews.

import { randomUUID } from 'node:crypto';
import { resourceKey } from './resources';
import type { TestApiServer } from './server';
import type { StoredObject } from './storage';
import { serviceAccountIdentity } from './tokens';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const SERVICE_ACCOUNT_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

export interface TokenControllerOptions {
  /** The cluster's CA certificate (PEM), written as `ca.crt`. */
  caPem: string;
  /** How long after the Secret's creation its data is filled. */
  delayMs?: number;
}

const SECRETS = resourceKey('', 'secrets');
const SERVICE_ACCOUNTS = resourceKey('', 'serviceaccounts');
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Starts filling token Secrets; returns the function that stops it. The tokens issued are in `issued`. */
export function startTokenController(
  api: TestApiServer,
  options: TokenControllerOptions,
): { stop: () => void; issued: Map<string, string> } {
  const timers = new Set<NodeJS.Timeout>();
  /** "namespace/secret" -> the token put in it. */
  const issued = new Map<string, string>();
  const fill = (secret: StoredObject) => {
    const { namespace, name } = secret.metadata;
    const current = api.storage.get(SECRETS, namespace, name);
    const account = (current?.metadata['annotations'] as Record<string, string> | undefined)?.[
      SERVICE_ACCOUNT_NAME_ANNOTATION
    ];
    if (!current || namespace === undefined || account === undefined) return;
    // The real controller deletes a token Secret whose account does not exist; leaving it unfilled
    // is what a client waiting for it sees either way.
    const sa = api.storage.get(SERVICE_ACCOUNTS, namespace, account);
    if (!sa) return;
    const token = `sa-token-${randomUUID()}`;
    issued.set(`${namespace}/${name}`, token);
    api.registerToken(token, serviceAccountIdentity({ namespace, serviceAccount: account }));
    const annotations = { ...(current.metadata['annotations'] as Record<string, string>) };
    annotations[SERVICE_ACCOUNT_UID_ANNOTATION] = String(sa.metadata.uid);
    api.storage.write(
      SECRETS,
      {
        ...current,
        metadata: { ...current.metadata, annotations },
        data: { 'ca.crt': b64(options.caPem), namespace: b64(namespace), token: b64(token) },
      },
      'MODIFIED',
    );
  };
  const off = api.storage.onEvent((event) => {
    if (event.resource !== SECRETS || event.type !== 'ADDED') return;
    if (event.object['type'] !== SERVICE_ACCOUNT_TOKEN_TYPE) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      fill(event.object);
    }, options.delayMs ?? 300);
    timers.add(timer);
  });
  return {
    issued,
    stop: () => {
      off();
      for (const t of timers) clearTimeout(t);
    },
  };
}
