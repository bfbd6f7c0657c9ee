// SPIFFE identities of Kubernetes service accounts: spiffe://<trust domain>/ns/<ns>/sa/<sa>.

export interface SpiffeIdentity {
  trustDomain: string;
  namespace: string;
  serviceAccount: string;
}

export const SPIFFE_PREFIX = 'spiffe://';
/** Longest identity accepted from a caller (ztunnel's are well under 200 bytes). */
export const MAX_SPIFFE_ID_LENGTH = 2048;

const SEGMENT = /^[A-Za-z0-9._-]+$/;

export function spiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `${SPIFFE_PREFIX}${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** Parses a service-account SPIFFE id; throws an Error saying what is wrong. */
export function parseSpiffeId(id: string): SpiffeIdentity {
  if (id.length > MAX_SPIFFE_ID_LENGTH) throw new Error(`identity is longer than ${MAX_SPIFFE_ID_LENGTH} characters`);
  if (!id.startsWith(SPIFFE_PREFIX)) throw new Error(`identity "${id}" does not start with ${SPIFFE_PREFIX}`);
  const parts = id.slice(SPIFFE_PREFIX.length).split('/');
  if (parts.length !== 5 || parts[1] !== 'ns' || parts[3] !== 'sa') {
    throw new Error(`identity "${id}" is not of the form spiffe://<trust domain>/ns/<namespace>/sa/<service account>`);
  }
  const [trustDomain, , namespace, , serviceAccount] = parts as [string, string, string, string, string];
  for (const [what, value] of [
    ['trust domain', trustDomain],
    ['namespace', namespace],
    ['service account', serviceAccount],
  ] as const) {
    if (!SEGMENT.test(value)) throw new Error(`identity "${id}" has an invalid ${what}`);
  }
  return { trustDomain, namespace, serviceAccount };
}

/** The Kubernetes username of a service account token. */
export function serviceAccountUsername(namespace: string, serviceAccount: string): string {
  return `system:serviceaccount:${namespace}:${serviceAccount}`;
}

/** Splits "system:serviceaccount:<ns>:<sa>"; undefined for any other username. */
export function parseServiceAccountUsername(
  username: string,
): { namespace: string; serviceAccount: string } | undefined {
  const [system, kind, namespace, serviceAccount, ...extra] = username.split(':');
  if (system !== 'system' || kind !== 'serviceaccount' || extra.length > 0) return undefined;
  if (namespace === undefined || serviceAccount === undefined) return undefined;
  if (!SEGMENT.test(namespace) || !SEGMENT.test(serviceAccount)) return undefined;
  return { namespace, serviceAccount };
}
