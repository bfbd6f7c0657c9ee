// Kubernetes mode: bearer tokens are checked by the API server (TokenReview). Reviews are cached by
// token hash so a burst of CSRs from one ztunnel costs one review: successes until the token's
// expiry or SUCCESS_TTL, failures for FAILURE_TTL.

import * as crypto from 'node:crypto';
import { AuthError } from './auth-error';
import { peekJwtPayload, VerifiedToken } from './local-jwt';
import { parseServiceAccountUsername } from './spiffe';

export const TOKEN_REVIEW_SUCCESS_TTL_MS = 5 * 60 * 1000;
export const TOKEN_REVIEW_FAILURE_TTL_MS = 5 * 1000;
/** Bounds memory; the oldest entry goes first when full. */
export const TOKEN_REVIEW_CACHE_MAX_ENTRIES = 10_000;

export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';

export interface TokenReviewResult {
  authenticated: boolean;
  username?: string;
  audiences?: string[];
  extra?: Record<string, string[]>;
  error?: string;
}

export interface TokenReviewer {
  review(token: string, audiences: readonly string[]): Promise<TokenReviewResult>;
}

/** What the reviewer needs of the API server: one TokenReview create (store/kube's KubeWriter). */
export interface TokenReviewApi {
  createTokenReview(
    token: string,
    audiences: readonly string[],
  ): Promise<{
    authenticated: boolean;
    username: string;
    audiences?: string[];
    extra: Record<string, string[]>;
    error?: string;
  }>;
}

/** TokenReview through the one writer to the API server. */
export class KubeTokenReviewer implements TokenReviewer {
  constructor(private readonly api: TokenReviewApi) {}

  async review(token: string, audiences: readonly string[]): Promise<TokenReviewResult> {
    const s = await this.api.createTokenReview(token, audiences);
    return {
      authenticated: s.authenticated,
      ...(s.username ? { username: s.username } : {}),
      // Only audiences the server named: an absent list means the requested ones were checked.
      ...(s.audiences ? { audiences: s.audiences } : {}),
      ...(Object.keys(s.extra).length > 0 ? { extra: s.extra } : {}),
      ...(s.error ? { error: s.error } : {}),
    };
  }
}

/** Turns a review into the caller's identity, or an AuthError with the reason. */
export function identityFromReview(review: TokenReviewResult, audiences: readonly string[]): VerifiedToken {
  if (!review.authenticated)
    throw new AuthError(
      'invalid_token',
      `TokenReview did not authenticate the token: ${review.error ?? 'no reason given'}`,
    );
  if (review.audiences && !review.audiences.some((a) => audiences.includes(a))) {
    throw new AuthError(
      'wrong_audience',
      `token audiences [${review.audiences.join(', ')}] include none of [${audiences.join(', ')}]`,
    );
  }
  const sa = parseServiceAccountUsername(review.username ?? '');
  if (!sa)
    throw new AuthError('not_a_service_account', `token user "${review.username ?? ''}" is not a service account`);
  const podName = review.extra?.[POD_NAME_EXTRA]?.[0] ?? '';
  const podUid = review.extra?.[POD_UID_EXTRA]?.[0] ?? '';
  return { ...sa, podName, podUid, audiences: review.audiences ?? [...audiences], exp: 0 };
}

interface CacheEntry {
  expiresAt: number;
  result: VerifiedToken | AuthError;
}

/** Verifies tokens with a TokenReviewer, caching outcomes by token hash. */
export class CachedTokenVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<VerifiedToken>>();

  constructor(
    private readonly reviewer: TokenReviewer,
    private readonly audiences: () => readonly string[],
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.cache.size;
  }

  async verify(token: string): Promise<VerifiedToken> {
    const key = crypto.createHash('sha256').update(token).digest('base64');
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > this.now()) {
      if (hit.result instanceof AuthError) throw hit.result;
      return hit.result;
    }
    if (hit) this.cache.delete(key);
    // Concurrent CSRs with one token share a single review.
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.reviewAndCache(key, token).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async reviewAndCache(key: string, token: string): Promise<VerifiedToken> {
    const audiences = this.audiences();
    let result: VerifiedToken | AuthError;
    try {
      const review = await this.reviewer.review(token, audiences);
      result = identityFromReview(review, audiences);
    } catch (err) {
      if (!(err instanceof AuthError)) {
        // The API server could not be asked: not the caller's fault, so nothing is cached.
        throw new AuthError('token_review_failed', `TokenReview request failed: ${(err as Error).message}`);
      }
      result = err;
    }
    const now = this.now();
    let expiresAt: number;
    if (result instanceof AuthError) {
      expiresAt = now + TOKEN_REVIEW_FAILURE_TTL_MS;
    } else {
      const exp = peekJwtPayload(token)?.['exp'];
      const tokenExpiry = typeof exp === 'number' ? exp * 1000 : Infinity;
      expiresAt = Math.min(now + TOKEN_REVIEW_SUCCESS_TTL_MS, tokenExpiry);
      if (typeof exp === 'number') result = { ...result, exp };
    }
    if (this.cache.size >= TOKEN_REVIEW_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { expiresAt, result });
    if (result instanceof AuthError) throw result;
    return result;
  }
}
