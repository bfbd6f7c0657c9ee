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
  | 'not_a_service_account'
  | 'untrusted_certificate';

export class AuthError extends Error {
  override name = 'AuthError';
  constructor(
    readonly reason: AuthFailureReason,
    message: string,
  ) {
    super(message);
  }
}
