// The AdmissionReview a webhook reply carries, typed as far as the tests read it, so a test reads
// `response.allowed` from a checked shape rather than from untyped JSON.

export interface ReviewReply {
  apiVersion: string;
  kind: string;
  /** status only on a denial (or a warning-free refusal), warnings only when there are some. */
  response: { uid: string; allowed: boolean; status?: { message: string }; warnings?: string[] };
}

/** The AdmissionReview in a reply body. */
export function parseReview(body: string): ReviewReply {
  return JSON.parse(body) as ReviewReply;
}
