import { AuthError } from '../../../src/security/auth-error';
import {
  CachedTokenVerifier,
  KubeTokenReviewer,
  POD_NAME_EXTRA,
  POD_UID_EXTRA,
  TOKEN_REVIEW_CACHE_MAX_ENTRIES,
  TOKEN_REVIEW_FAILURE_TTL_MS,
  TOKEN_REVIEW_SUCCESS_TTL_MS,
  TOKEN_REVIEW_TIMEOUT_MS,
  TokenReviewResult,
  TokenReviewer,
  identityFromReview,
} from '../../../src/security/token-review';
import type { ReviewOptions } from '../../../src/security/token-review';
import { KubeApiError } from '../../../src/store/kube/client';
import { MemoryStore } from '../../../src/store/memory-store';

const ok: TokenReviewResult = {
  authenticated: true,
  username: 'system:serviceaccount:istio-system:ztunnel',
  audiences: ['istio-ca'],
  extra: { [POD_NAME_EXTRA]: ['ztunnel-a'], [POD_UID_EXTRA]: ['uid-1'] },
};

function jwtWithExp(expSeconds: number, salt = ''): string {
  return `h.${Buffer.from(JSON.stringify({ exp: expSeconds, salt })).toString('base64url')}.s`;
}

/** The store holding the pod `ok`'s token is bound to: what lets a success be cached. */
function podStore(): MemoryStore {
  const store = new MemoryStore();
  store.upsert('Pod', [{ metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'uid-1' } }]);
  return store;
}

/** A reviewer whose API server never answers: it ends only when the review is cancelled. */
class HangingReviewer implements TokenReviewer {
  signals: AbortSignal[] = [];
  review(_token: string, _audiences: readonly string[], opts: ReviewOptions = {}): Promise<TokenReviewResult> {
    const { signal } = opts;
    if (signal) this.signals.push(signal);
    return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
  }
}

class CountingReviewer implements TokenReviewer {
  calls = 0;
  constructor(public result: TokenReviewResult | Error) {}
  review(): Promise<TokenReviewResult> {
    this.calls++;
    return this.result instanceof Error ? Promise.reject(this.result) : Promise.resolve(this.result);
  }
}

describe('TokenReview results', () => {
  test('an authenticated service account yields its namespace, name and pod from user.extra', () => {
    expect(identityFromReview(ok, ['istio-ca'])).toMatchObject({
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: 'ztunnel-a',
      podUid: 'uid-1',
    });
  });

  test('an unauthenticated review is invalid_token with the API server reason', () => {
    expect(() => identityFromReview({ authenticated: false, error: 'token expired' }, ['istio-ca'])).toThrow(
      /token expired/,
    );
  });

  test('a user that is not a service account is refused', () => {
    expect(() => identityFromReview({ ...ok, username: 'alice' }, ['istio-ca'])).toThrow(
      // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- @types/jest types asymmetric matchers as any; toThrow matches the thrown error against it
      expect.objectContaining({ reason: 'not_a_service_account' }),
    );
  });

  test('review audiences outside TOKEN_AUDIENCES are refused', () => {
    expect(() => identityFromReview({ ...ok, audiences: ['other'] }, ['istio-ca'])).toThrow(
      // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- @types/jest types asymmetric matchers as any; toThrow matches the thrown error against it
      expect.objectContaining({ reason: 'wrong_audience' }),
    );
  });
});

describe('the TokenReview cache', () => {
  let now = 1_000_000_000_000;
  const clock = () => now;

  test('a burst of calls with one token costs one review', async () => {
    const reviewer = new CountingReviewer(ok);
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock, { pods: podStore() });
    const token = jwtWithExp(now / 1000 + 3600);
    await Promise.all(Array.from({ length: 50 }, () => v.verify(token)));
    await v.verify(token);
    expect(reviewer.calls).toBe(1);
  });

  test(`a success is reviewed again after ${TOKEN_REVIEW_SUCCESS_TTL_MS} ms`, async () => {
    const reviewer = new CountingReviewer(ok);
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock, { pods: podStore() });
    const token = jwtWithExp(now / 1000 + 3600);
    await v.verify(token);
    now += TOKEN_REVIEW_SUCCESS_TTL_MS + 1;
    await v.verify(token);
    expect(reviewer.calls).toBe(2);
  });

  test('a success is not reused past the token expiry when that comes first', async () => {
    const reviewer = new CountingReviewer(ok);
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock, { pods: podStore() });
    const token = jwtWithExp(now / 1000 + 10);
    await v.verify(token);
    now += 11_000;
    await v.verify(token);
    expect(reviewer.calls).toBe(2);
  });

  test(`a failure is cached for ${TOKEN_REVIEW_FAILURE_TTL_MS} ms only`, async () => {
    const reviewer = new CountingReviewer({ authenticated: false, error: 'nope' });
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock);
    const token = jwtWithExp(now / 1000 + 3600);
    await expect(v.verify(token)).rejects.toBeInstanceOf(AuthError);
    await expect(v.verify(token)).rejects.toBeInstanceOf(AuthError);
    expect(reviewer.calls).toBe(1);
    now += TOKEN_REVIEW_FAILURE_TTL_MS + 1;
    await expect(v.verify(token)).rejects.toBeInstanceOf(AuthError);
    expect(reviewer.calls).toBe(2);
  });

  test('an unreachable API server is token_review_unavailable (retryable) and is not cached', async () => {
    const reviewer = new CountingReviewer(new Error('connect ECONNREFUSED'));
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock);
    const token = jwtWithExp(now / 1000 + 3600);
    await expect(v.verify(token)).rejects.toMatchObject({ reason: 'token_review_unavailable', retryable: true });
    await expect(v.verify(token)).rejects.toMatchObject({ reason: 'token_review_unavailable' });
    expect(reviewer.calls).toBe(2);
  });

  test('a 5xx or 429 is token_review_unavailable; another 4xx (RBAC) is token_review_failed, not retryable', async () => {
    const token = jwtWithExp(now / 1000 + 3600);
    for (const [status, reason, retryable] of [
      [503, 'token_review_unavailable', true],
      [429, 'token_review_unavailable', true],
      [403, 'token_review_failed', false],
    ] as const) {
      const reviewer = new CountingReviewer(new KubeApiError(status, 'x', `status ${status}`));
      const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock);
      await expect(v.verify(token)).rejects.toMatchObject({ reason, retryable });
    }
  });

  test('a deleted pod takes the cached success of its token with it', async () => {
    const store = podStore();
    const reviewer = new CountingReviewer(ok);
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock, { pods: store });
    const token = jwtWithExp(now / 1000 + 3600);
    await v.verify(token);
    await v.verify(token);
    expect(reviewer.calls).toBe(1);
    store.remove('Pod', [{ metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'uid-1' } }]);
    expect(v.size).toBe(0);
    await v.verify(token);
    expect(reviewer.calls).toBe(2);
  });

  test('a pod recreated under its name (new uid) ends the old pod`s cached success', async () => {
    const store = podStore();
    const reviewer = new CountingReviewer(ok);
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock, { pods: store });
    await v.verify(jwtWithExp(now / 1000 + 3600));
    store.upsert('Pod', [{ metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'uid-2' } }]);
    expect(v.size).toBe(0);
  });

  test('a success is not cached for a token bound to no pod, or to a pod the store does not hold', async () => {
    const token = jwtWithExp(now / 1000 + 3600);
    const unbound = new CountingReviewer({ ...ok, extra: {} });
    const v1 = new CachedTokenVerifier(unbound, () => ['istio-ca'], clock, { pods: podStore() });
    await v1.verify(token);
    await v1.verify(token);
    expect(unbound.calls).toBe(2);
    const unknownPod = new CountingReviewer(ok);
    const v2 = new CachedTokenVerifier(unknownPod, () => ['istio-ca'], clock, { pods: new MemoryStore() });
    await v2.verify(token);
    await v2.verify(token);
    expect(unknownPod.calls).toBe(2);
  });

  test(`a review is bounded by TOKEN_REVIEW_TIMEOUT_MS (${TOKEN_REVIEW_TIMEOUT_MS} ms): token_review_timeout`, async () => {
    jest.useFakeTimers();
    try {
      const reviewer = new HangingReviewer();
      const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock);
      const outcome = v.verify(jwtWithExp(now / 1000 + 3600));
      const settled = expect(outcome).rejects.toMatchObject({ reason: 'token_review_timeout', retryable: true });
      jest.advanceTimersByTime(TOKEN_REVIEW_TIMEOUT_MS - 1);
      expect(reviewer.signals[0]?.aborted).toBe(false);
      jest.advanceTimersByTime(1);
      expect(reviewer.signals[0]?.aborted).toBe(true);
      await settled;
    } finally {
      jest.useRealTimers();
    }
  });

  test('the review shared by concurrent callers is abandoned only when the last of them leaves', async () => {
    const reviewer = new HangingReviewer();
    const v = new CachedTokenVerifier(reviewer, () => ['istio-ca'], clock);
    const token = jwtWithExp(now / 1000 + 3600);
    const [first, second] = [new AbortController(), new AbortController()];
    const a = v.verify(token, { signal: first.signal });
    const b = v.verify(token, { signal: second.signal });
    expect(reviewer.signals).toHaveLength(1);
    first.abort();
    await expect(a).rejects.toMatchObject({ reason: 'token_review_cancelled' });
    expect(reviewer.signals[0]?.aborted).toBe(false);
    second.abort();
    await expect(b).rejects.toMatchObject({ reason: 'token_review_cancelled' });
    expect(reviewer.signals[0]?.aborted).toBe(true);
  });

  test(`the cache holds at most ${TOKEN_REVIEW_CACHE_MAX_ENTRIES} entries`, async () => {
    const v = new CachedTokenVerifier(new CountingReviewer(ok), () => ['istio-ca'], clock, { pods: podStore() });
    for (let i = 0; i < TOKEN_REVIEW_CACHE_MAX_ENTRIES + 10; i++)
      await v.verify(jwtWithExp(now / 1000 + 3600, String(i)));
    expect(v.size).toBe(TOKEN_REVIEW_CACHE_MAX_ENTRIES);
  });
});

describe('TokenReview through the API writer', () => {
  const answer = {
    authenticated: true,
    username: 'system:serviceaccount:istio-system:ztunnel',
    extra: { [POD_NAME_EXTRA]: ['ztunnel-1'] },
  };

  test('a review whose answer names no audiences is checked against the requested ones, not refused as wrong_audience', async () => {
    const reviewer = new KubeTokenReviewer({ createTokenReview: () => Promise.resolve(answer) });
    const review = await reviewer.review('t', ['istio-ca']);
    expect(review.audiences).toBeUndefined();
    expect(identityFromReview(review, ['istio-ca'])).toMatchObject({
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: 'ztunnel-1',
      audiences: ['istio-ca'],
    });
  });

  test('audiences the server names are kept, so a token for another audience is refused', async () => {
    const reviewer = new KubeTokenReviewer({
      createTokenReview: () => Promise.resolve({ ...answer, audiences: ['other'] }),
    });
    const review = await reviewer.review('t', ['istio-ca']);
    expect(() => identityFromReview(review, ['istio-ca'])).toThrow(
      // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- @types/jest types asymmetric matchers as any; toThrow matches the thrown error against it
      expect.objectContaining({ reason: 'wrong_audience' }),
    );
  });
});
