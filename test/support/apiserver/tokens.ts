// TokenReview: the identities behind bearer tokens, as a test registers them.

export interface TokenIdentity {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  /** Audiences the token was issued for; default the API server's own. */
  audiences?: string[];
}

export const API_SERVER_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';
export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';

/** The identity of a bound service account token, as the API server reports it. */
export function serviceAccountIdentity(p: {
  namespace: string;
  serviceAccount: string;
  podName?: string;
  podUid?: string;
  audiences?: string[];
  uid?: string;
}): TokenIdentity {
  const extra: Record<string, string[]> = {};
  if (p.podName) extra[POD_NAME_EXTRA] = [p.podName];
  if (p.podUid) extra[POD_UID_EXTRA] = [p.podUid];
  return {
    username: `system:serviceaccount:${p.namespace}:${p.serviceAccount}`,
    uid: p.uid ?? `sa-uid-${p.namespace}-${p.serviceAccount}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${p.namespace}`, 'system:authenticated'],
    extra,
    ...(p.audiences ? { audiences: p.audiences } : {}),
  };
}

export interface TokenReviewStatus {
  authenticated: boolean;
  user?: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

export function reviewToken(
  tokens: ReadonlyMap<string, TokenIdentity>,
  token: string,
  requested: string[] | undefined,
): TokenReviewStatus {
  const identity = tokens.get(token);
  if (!identity) return { authenticated: false, error: '[invalid bearer token, token lookup failed]' };
  const issuedFor = identity.audiences ?? [API_SERVER_AUDIENCE];
  const wanted = requested && requested.length > 0 ? requested : [API_SERVER_AUDIENCE];
  const audiences = wanted.filter((a) => issuedFor.includes(a));
  if (audiences.length === 0) {
    return {
      authenticated: false,
      error: `[invalid bearer token, token audiences ${JSON.stringify(issuedFor)} is invalid for the target audiences ${JSON.stringify(wanted)}]`,
    };
  }
  const user = {
    username: identity.username,
    ...(identity.uid ? { uid: identity.uid } : {}),
    ...(identity.groups ? { groups: identity.groups } : {}),
    ...(identity.extra ? { extra: identity.extra } : {}),
  };
  return { authenticated: true, user, audiences };
}
