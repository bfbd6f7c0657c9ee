// Kubernetes mode: bearer tokens are checked by the API server (TokenReview). A burst of CSRs
// from one ztunnel costs one review: concurrent calls share it, and a success is remembered for a
// token bound to a pod the store holds, until SUCCESS_TTL, the token's expiry, or that pod's
// deletion, whichever comes first (the API server refuses a deleted pod's token at once, so a
// cached success must not outlive the pod). Failures are remembered for FAILURE_TTL. A review is
// bounded by TOKEN_REVIEW_TIMEOUT_MS and abandoned when every caller waiting for it has gone.

import * as crypto from 'node:crypto';
import { KubeApiError } from '../store/kube/client';
import type { ObjectStore, StoreEvent } from '../store/types';
import { AuthError } from './auth-error';
import { peekJwtPayload, VerifiedToken } from './local-jwt';
import { parseServiceAccountUsername } from './spiffe';

export const TOKEN_REVIEW_SUCCESS_TTL_MS = 5 * 60 * 1000;
export const TOKEN_REVIEW_FAILURE_TTL_MS = 5 * 1000;
/** Bounds memory; the oldest entry goes first when full. */
export const TOKEN_REVIEW_CACHE_MAX_ENTRIES = 10_000;
/**
 * Bound on one review, retries included. A working API server answers a TokenReview in
 * milliseconds and a slow one (several seconds per call) still within this; a hung one frees the
 * CSR with UNAVAILABLE so ztunnel retries with its own backoff instead of waiting indefinitely.
 * The same bound as one API client request (REQUEST_TIMEOUT_MS). A caller's earlier gRPC deadline
 * ends its wait sooner.
 */
export const TOKEN_REVIEW_TIMEOUT_MS = 10_000;

export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';

export interface TokenReviewResult {
  authenticated: boolean;
  username?: string;
  audiences?: string[];
  extra?: Record<string, string[]>;
  error?: string;
}

/** Cancels a review (its bound passed, or nobody waits for it any more). */
export interface ReviewOptions {
  signal?: AbortSignal;
}

export interface TokenReviewer {
  review(token: string, audiences: readonly string[], opts?: ReviewOptions): Promise<TokenReviewResult>;
}

/** What the reviewer needs of the API server: one TokenReview create (store/kube's KubeWriter). */
export interface TokenReviewApi {
  createTokenReview(
    token: string,
    audiences: readonly string[],
    opts?: ReviewOptions,
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

  async review(token: string, audiences: readonly string[], opts: ReviewOptions = {}): Promise<TokenReviewResult> {
    const s = await this.api.createTokenReview(token, audiences, opts);
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
  /** The uid of the pod the token is bound to: its deletion ends the entry. */
  podUid?: string;
}

/** A review in flight, shared by every call with the same token; abandoned when all of them left. */
interface Flight {
  promise: Promise<VerifiedToken>;
  controller: AbortController;
  waiters: number;
}

export interface CachedTokenVerifierOptions {
  /**
   * The store the bound pods are watched in: a success is cached only for a token bound to a pod
   * the store holds, and dropped when that pod is deleted. Without it no success is cached.
   */
  pods?: ObjectStore;
  /** Bound on one review; TOKEN_REVIEW_TIMEOUT_MS unless given (tests). */
  timeoutMs?: number;
}

const TIMED_OUT = 'timeout';
const ABANDONED = 'abandoned';

/** Why the API server could not be asked, as the reason the caller is refused for. */
function reviewFailure(err: unknown, signal: AbortSignal, timeoutMs: number): AuthError {
  if (signal.aborted && signal.reason === TIMED_OUT)
    return new AuthError('token_review_timeout', `TokenReview not answered within ${timeoutMs} ms`);
  if (signal.aborted) return new AuthError('token_review_cancelled', 'every caller left before the TokenReview ended');
  const message = (err as Error).message;
  // A 4xx other than 429 is an answer (RBAC, a rejected request): the server works but refuses.
  if (err instanceof KubeApiError && err.status < 500 && err.status !== 429)
    return new AuthError('token_review_failed', `TokenReview refused by the API server: ${message}`);
  return new AuthError('token_review_unavailable', `TokenReview request failed: ${message}`);
}

/** Verifies tokens with a TokenReviewer, caching outcomes by token hash. */
export class CachedTokenVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly byPod = new Map<string, Set<string>>();
  private readonly inFlight = new Map<string, Flight>();
  private readonly timeoutMs: number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly reviewer: TokenReviewer,
    private readonly audiences: () => readonly string[],
    private readonly now: () => number = Date.now,
    private readonly opts: CachedTokenVerifierOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? TOKEN_REVIEW_TIMEOUT_MS;
    this.unsubscribe = opts.pods?.subscribe((events) => this.onPodEvents(events)) ?? (() => undefined);
  }

  get size(): number {
    return this.cache.size;
  }

  /** Stops watching pods (the verifier keeps working, caching no success). */
  close(): void {
    this.unsubscribe();
  }

  async verify(token: string, opts: ReviewOptions = {}): Promise<VerifiedToken> {
    const key = crypto.createHash('sha256').update(token).digest('base64');
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > this.now()) {
      if (hit.result instanceof AuthError) throw hit.result;
      return hit.result;
    }
    if (hit) this.forget(key);
    // Concurrent CSRs with one token share a single review.
    let flight = this.inFlight.get(key);
    // An abandoned review is still unwinding: a new caller starts a fresh one rather than share its end.
    if (!flight || flight.controller.signal.aborted) {
      const controller = new AbortController();
      const promise = this.reviewAndCache(key, token, controller).finally(() => this.inFlight.delete(key));
      flight = { promise, controller, waiters: 0 };
      this.inFlight.set(key, flight);
    }
    return this.wait(flight, opts.signal);
  }

  /** The flight's outcome for one caller; a caller that leaves stops waiting, and the last one ends the review. */
  private wait(flight: Flight, signal: AbortSignal | undefined): Promise<VerifiedToken> {
    flight.waiters++;
    if (!signal) return flight.promise;
    return new Promise<VerifiedToken>((resolve, reject) => {
      const leave = () => {
        if (--flight.waiters === 0) flight.controller.abort(ABANDONED);
        reject(new AuthError('token_review_cancelled', 'the caller left before the TokenReview was answered'));
      };
      if (signal.aborted) {
        leave();
        return;
      }
      signal.addEventListener('abort', leave, { once: true });
      flight.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', leave));
    });
  }

  private async reviewAndCache(key: string, token: string, controller: AbortController): Promise<VerifiedToken> {
    const audiences = this.audiences();
    const timer = setTimeout(() => controller.abort(TIMED_OUT), this.timeoutMs);
    let result: VerifiedToken | AuthError;
    try {
      const review = await this.reviewer.review(token, audiences, { signal: controller.signal });
      result = identityFromReview(review, audiences);
    } catch (err) {
      // The API server could not be asked (or did not answer in time): not the caller's fault,
      // so nothing is cached and the caller may retry.
      if (!(err instanceof AuthError)) throw reviewFailure(err, controller.signal, this.timeoutMs);
      result = err;
    } finally {
      clearTimeout(timer);
    }
    const now = this.now();
    if (result instanceof AuthError) {
      this.remember(key, { expiresAt: now + TOKEN_REVIEW_FAILURE_TTL_MS, result });
      throw result;
    }
    const exp = peekJwtPayload(token)?.['exp'];
    if (typeof exp === 'number') result = { ...result, exp };
    // Only while the store can tell us the pod is gone; a token bound to no pod is reviewed every time.
    if (this.podIsWatched(result)) {
      const tokenExpiry = typeof exp === 'number' ? exp * 1000 : Infinity;
      const expiresAt = Math.min(now + TOKEN_REVIEW_SUCCESS_TTL_MS, tokenExpiry);
      this.remember(key, { expiresAt, result, podUid: result.podUid });
    }
    return result;
  }

  /** True when the token's bound pod is in the store now, so its deletion will reach us. */
  private podIsWatched(token: VerifiedToken): boolean {
    if (!this.opts.pods || !token.podName || !token.podUid) return false;
    return this.opts.pods.get('Pod', token.namespace, token.podName)?.metadata.uid === token.podUid;
  }

  private remember(key: string, entry: CacheEntry): void {
    if (this.cache.size >= TOKEN_REVIEW_CACHE_MAX_ENTRIES) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.forget(oldest.value);
    }
    this.cache.set(key, entry);
    if (entry.podUid === undefined) return;
    let keys = this.byPod.get(entry.podUid);
    if (!keys) this.byPod.set(entry.podUid, (keys = new Set()));
    keys.add(key);
  }

  private forget(key: string): void {
    const uid = this.cache.get(key)?.podUid;
    this.cache.delete(key);
    if (uid === undefined) return;
    const keys = this.byPod.get(uid);
    keys?.delete(key);
    if (keys?.size === 0) this.byPod.delete(uid);
  }

  /** A deleted pod (or one replaced under its name by a new uid) takes its tokens' reviews with it. */
  private onPodEvents(events: readonly StoreEvent[]): void {
    for (const e of events) {
      if (e.kind !== 'Pod') continue;
      const gone =
        e.type === 'delete'
          ? e.object.metadata.uid
          : e.old && e.old.metadata.uid !== e.object.metadata.uid
            ? e.old.metadata.uid
            : undefined;
      if (gone === undefined) continue;
      for (const key of [...(this.byPod.get(gone) ?? [])]) this.forget(key);
    }
  }
}
