// Local mode's stand-in for Kubernetes service-account tokens: ES256 JWTs signed with a key in
// --stateDir, carrying the claims of a projected token. `istiod-ts token` mints them and the
// server verifies them, so the CA can be called locally exactly as ztunnel calls it in a cluster.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE, writeFileAtomicSync } from '../config/atomic-file';
import { AuthError } from './auth-error';
import { parseServiceAccountUsername, serviceAccountUsername } from './spiffe';

export const TOKEN_KEY_FILE = 'token-key.pem';
export const LOCAL_TOKEN_ISSUER = 'istiod-ts-local';
/** Longest bearer token read; a projected token is ~1 KiB. */
export const MAX_TOKEN_BYTES = 16 * 1024;
/** Tolerated clock skew on exp/nbf, in seconds. */
export const CLOCK_SKEW_SECONDS = 60;

export interface TokenSubject {
  namespace: string;
  serviceAccount: string;
  podName: string;
  podUid: string;
  nodeName?: string;
}

export interface VerifiedToken extends TokenSubject {
  audiences: string[];
  /** Expiry, seconds since the epoch. */
  exp: number;
}

interface ProjectedClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: { name: string; uid: string };
    pod: { name: string; uid: string };
    node?: { name: string; uid: string };
  };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** Loads the token key, creating it (mode 0600, written atomically) on first use. */
export function loadOrCreateTokenKey(stateDir: string): crypto.KeyObject {
  const file = path.join(stateDir, TOKEN_KEY_FILE);
  const unreadable = () =>
    new Error(
      `${file} is not a readable private key: restore it from a backup, or delete it to create a new one (tokens signed with the old key then stop verifying)`,
    );
  try {
    return crypto.createPrivateKey(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable();
  }
  const pem = crypto
    .generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  try {
    // Exclusive: the server and `istiod-ts token` may race to create it; the first one wins.
    writeFileAtomicSync(file, pem, { mode: PRIVATE_FILE_MODE, exclusive: true });
    return crypto.createPrivateKey(pem);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    try {
      return crypto.createPrivateKey(fs.readFileSync(file, 'utf8'));
    } catch {
      throw unreadable();
    }
  }
}

export function signLocalToken(
  key: crypto.KeyObject,
  subject: TokenSubject,
  audiences: string[],
  ttlSeconds: number,
  now = Date.now(),
): string {
  const iat = Math.floor(now / 1000);
  const claims: ProjectedClaims = {
    iss: LOCAL_TOKEN_ISSUER,
    sub: serviceAccountUsername(subject.namespace, subject.serviceAccount),
    aud: audiences,
    exp: iat + ttlSeconds,
    iat,
    nbf: iat,
    'kubernetes.io': {
      namespace: subject.namespace,
      serviceaccount: { name: subject.serviceAccount, uid: crypto.randomUUID() },
      pod: { name: subject.podName, uid: subject.podUid },
      ...(subject.nodeName ? { node: { name: subject.nodeName, uid: crypto.randomUUID() } } : {}),
    },
  };
  const signingInput = `${b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  const signature = crypto.sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${b64url(signature)}`;
}

/** The three dot-separated parts of a compact JWT, or undefined when there are not exactly three. */
function jwtParts(token: string): [header: string, payload: string, signature: string] | undefined {
  const [header, payload, signature, ...extra] = token.split('.');
  if (header === undefined || payload === undefined || signature === undefined || extra.length > 0) return undefined;
  return [header, payload, signature];
}

/** The value at `path` inside parsed JSON; undefined where a step is not an object. */
function jsonAt(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The payload of a JWT without verifying it (to read `exp` for caching); undefined if unreadable. */
export function peekJwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = jwtParts(token);
  if (!parts || token.length > MAX_TOKEN_BYTES) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return payload && typeof payload === 'object' && !Array.isArray(payload)
      ? (payload as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Verifies a local token: signature, expiry, audience, and the service-account claims. */
export function verifyLocalToken(
  publicKey: crypto.KeyObject,
  token: string,
  audiences: readonly string[],
  now = Date.now(),
): VerifiedToken {
  if (token.length > MAX_TOKEN_BYTES)
    throw new AuthError('malformed_token', `token is longer than ${MAX_TOKEN_BYTES} bytes`);
  const parts = jwtParts(token);
  if (!parts) throw new AuthError('malformed_token', 'token is not a JWT (three dot-separated parts)');
  let header: { alg?: unknown };
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as { alg?: unknown };
  } catch {
    throw new AuthError('malformed_token', 'token header is not base64url JSON');
  }
  if (header.alg !== 'ES256')
    throw new AuthError('invalid_token', `token algorithm ${String(header.alg)} is not ES256`);
  const ok = crypto.verify(
    'sha256',
    Buffer.from(`${parts[0]}.${parts[1]}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(parts[2], 'base64url'),
  );
  if (!ok) throw new AuthError('invalid_token', 'token signature does not verify with the local token key');
  const claims = peekJwtPayload(token) as Partial<ProjectedClaims> | undefined;
  if (!claims) throw new AuthError('malformed_token', 'token payload is not a JSON object');
  const seconds = Math.floor(now / 1000);
  if (typeof claims.exp !== 'number' || claims.exp + CLOCK_SKEW_SECONDS <= seconds)
    throw new AuthError('expired_token', `token expired at ${claims.exp ?? 'unknown time'}`);
  if (typeof claims.nbf === 'number' && claims.nbf - CLOCK_SKEW_SECONDS > seconds)
    throw new AuthError('invalid_token', 'token is not valid yet');
  const tokenAud = Array.isArray(claims.aud)
    ? claims.aud.filter((a): a is string => typeof a === 'string')
    : typeof claims.aud === 'string'
      ? [claims.aud]
      : [];
  if (!tokenAud.some((a) => audiences.includes(a))) {
    throw new AuthError(
      'wrong_audience',
      `token audiences [${tokenAud.join(', ')}] include none of [${audiences.join(', ')}]`,
    );
  }
  const sa = parseServiceAccountUsername(str(claims.sub) ?? '');
  if (!sa)
    throw new AuthError('not_a_service_account', `token subject "${String(claims.sub)}" is not a service account`);
  const k8s = claims['kubernetes.io'];
  const podName = str(jsonAt(k8s, 'pod', 'name'));
  const podUid = str(jsonAt(k8s, 'pod', 'uid'));
  if (!podName || !podUid)
    throw new AuthError('invalid_token', 'token carries no pod name and uid (kubernetes.io.pod)');
  const nodeName = str(jsonAt(k8s, 'node', 'name'));
  return { ...sa, podName, podUid, ...(nodeName ? { nodeName } : {}), audiences: tokenAud, exp: claims.exp };
}
