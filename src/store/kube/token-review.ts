// A TokenReview answer as the CA uses it: the user, the pod it was bound to, the audiences.

export interface TokenReviewResult {
  authenticated: boolean;
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
  /** From user.extra authentication.kubernetes.io/pod-name (bound service account tokens). */
  podName?: string;
  podUid?: string;
  /** As the API server answered them; absent when it did not say (then the requested ones held). */
  audiences?: string[];
  error?: string;
}

/** The status of a TokenReview the API server answered. */
export interface TokenReviewAnswer {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    audiences?: string[];
    error?: string;
  };
}

export function tokenReviewResult(review: TokenReviewAnswer): TokenReviewResult {
  const status = review.status ?? {};
  const extra = status.user?.extra ?? {};
  const podName = extra['authentication.kubernetes.io/pod-name']?.[0];
  const podUid = extra['authentication.kubernetes.io/pod-uid']?.[0];
  return {
    authenticated: status.authenticated === true,
    username: status.user?.username ?? '',
    uid: status.user?.uid ?? '',
    groups: status.user?.groups ?? [],
    extra,
    ...(podName !== undefined ? { podName } : {}),
    ...(podUid !== undefined ? { podUid } : {}),
    ...(status.audiences ? { audiences: status.audiences } : {}),
    ...(status.error ? { error: status.error } : {}),
  };
}
