// Why authentication failed, as a low-cardinality reason (a metric label) plus a precise message
// (for the log). Callers only ever see istiod's generic gRPC message.

export type AuthFailureReason =
  | 'no_credentials'
  | 'malformed_token'
  | 'invalid_token'
  | 'expired_token'
  | 'wrong_audience'
  | 'unknown_cluster'
  | 'token_review_failed'
  | 'token_review_unavailable'
  | 'token_review_timeout'
  | 'token_review_cancelled'
  | 'not_a_service_account'
  | 'untrusted_certificate'
  | 'expired_certificate';

/** Reasons that say nothing of the caller: the API server could not answer, so the caller may retry. */
const RETRYABLE: ReadonlySet<AuthFailureReason> = new Set([
  'token_review_unavailable',
  'token_review_timeout',
  'token_review_cancelled',
]);

export class AuthError extends Error {
  override name = 'AuthError';
  constructor(
    readonly reason: AuthFailureReason,
    message: string,
    /**
     * The known cluster whose credentials were refused (its TokenReview said no, or could not be
     * asked); absent when no cluster was decided (no credentials, a certificate, an unknown id). A
     * metric label, so it is never the caller's own unchecked `clusterid`.
     */
    readonly cluster?: string,
  ) {
    super(message);
  }

  /** True when the caller is not at fault and a retry may succeed (gRPC UNAVAILABLE, not UNAUTHENTICATED). */
  get retryable(): boolean {
    return RETRYABLE.has(this.reason);
  }
}
