// A bound service account token lives only as long as its pod: the real API server refuses the
// token of a deleted pod at once, whatever the token's own expiry says.

import { resourceKey } from './resources';
import type { Storage } from './storage';
import { POD_NAME_EXTRA, type TokenIdentity, type TokenReviewStatus } from './tokens';

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):[^:]+$/;

/** The refusal of a token whose bound pod no longer exists, or undefined when it still does (or none is bound). */
export function deletedPodRefusal(
  storage: Storage,
  identity: TokenIdentity | undefined,
): TokenReviewStatus | undefined {
  const podName = identity?.extra?.[POD_NAME_EXTRA]?.[0];
  const namespace = SERVICE_ACCOUNT_USER.exec(identity?.username ?? '')?.[1];
  if (podName === undefined || namespace === undefined) return undefined;
  if (storage.get(resourceKey('', 'pods'), namespace, podName)) return undefined;
  return {
    authenticated: false,
    error: `[invalid bearer token, pod "${podName}" not found (the token was bound to a deleted pod)]`,
  };
}
