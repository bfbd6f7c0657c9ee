// The AdmissionReview exchange as a pure function: request bytes and content type in, HTTP
// status and response body out, plus what happened (for metrics and logs). The HTTPS server
// only moves bytes; every rule of istiod's webhook lives here.

import { tooDeep } from './validators/common/json-depth';
import { isObject, JsonObject, quote } from './validators/common/fields';
import { clip, formatError } from './validators/common/report';
import { unknownTopLevelKeys, validateConfig } from './validators/registry';

/** istiod reads at most this much of a request body (kube.MaxRequestBodyBytes). */
export const MAX_REQUEST_BODY_BYTES = 6 * 1024 * 1024;
/**
 * Deepest nesting of JSON objects and arrays read in a review, counted from the review itself.
 * Go's encoding/json refuses documents nested deeper than 10,000 levels, and both the API server
 * and istiod decode with it, so no review the API server sends can go past this.
 */
export const MAX_JSON_DEPTH = 10_000;
/**
 * Shortest body that can nest past MAX_JSON_DEPTH: every level takes an opening and a closing
 * bracket byte, so a shorter body cannot, and its depth walk (a tenth of a small review's cost)
 * is skipped.
 */
export const MIN_BYTES_TOO_DEEP = 2 * (MAX_JSON_DEPTH + 1);
export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
const JSON_CONTENT_TYPE = 'application/json';

/** Reasons on galley_validation_failed, as istiod labels them. */
export const FAILURE_REASONS = {
  unsupportedOperation: 'unsupported_operation',
  decodeError: 'yaml_decode_error',
  unknownType: 'unknown_type',
  conversionError: 'crd_conversion_error',
  invalidConfig: 'invalid_config',
} as const;
export type FailureReason = (typeof FAILURE_REASONS)[keyof typeof FAILURE_REASONS];

export interface ResourceLabels {
  group: string;
  version: string;
  resource: string;
}

export type ReviewOutcome =
  | { type: 'passed'; resource: ResourceLabels }
  | {
      type: 'failed';
      reason: FailureReason;
      resource: ResourceLabels;
      dryRun: boolean;
      message: string;
      allowed: boolean;
    }
  | { type: 'http-error'; status: number; message: string }
  | { type: 'undecodable'; message: string };

export interface AdmissionReply {
  status: number;
  contentType: string;
  body: string;
  outcome: ReviewOutcome;
}

interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { metadata: Record<string, never>; message: string };
  warnings?: string[];
}

function httpError(status: number, message: string): AdmissionReply {
  return {
    status,
    contentType: 'text/plain; charset=utf-8',
    body: `${message}\n`,
    outcome: { type: 'http-error', status, message },
  };
}

function reply(apiVersion: string | undefined, response: AdmissionResponse, outcome: ReviewOutcome): AdmissionReply {
  // Without a decoded review istiod answers in the v1beta1 shape with no type fields.
  const review = apiVersion ? { kind: 'AdmissionReview', apiVersion, response } : { response };
  return { status: 200, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(review), outcome };
}

const denied = (uid: string, message: string): AdmissionResponse => ({
  uid,
  allowed: false,
  status: { metadata: {}, message },
});

/** Decodes the body as an AdmissionReview of a version we speak, or says why it is not one. */
function decodeReview(body: Buffer): { review: JsonObject; apiVersion: string } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return { error: `could not decode body: ${(e as Error).message}` };
  }
  if (!isObject(parsed)) return { error: 'could not decode body: expected a JSON object' };
  const kind = parsed['kind'];
  const apiVersion = parsed['apiVersion'];
  if (typeof kind !== 'string' || kind === '') return { error: "could not decode body: Object 'Kind' is missing" };
  if (
    typeof apiVersion !== 'string' ||
    (apiVersion !== ADMISSION_V1 && apiVersion !== ADMISSION_V1BETA1) ||
    kind !== 'AdmissionReview'
  ) {
    return {
      error: `could not decode body: no kind "${kind}" is registered for version "${typeof apiVersion === 'string' ? apiVersion : quote(apiVersion)}"`,
    };
  }
  return { review: parsed, apiVersion };
}

function resourceOf(request: JsonObject): ResourceLabels {
  const r = isObject(request['resource']) ? request['resource'] : {};
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  return { group: s(r['group']), version: s(r['version']), resource: s(r['resource']) };
}

/** The answer to a body over MAX_REQUEST_BODY_BYTES, which is refused without being read. */
export function bodyTooLarge(): AdmissionReply {
  return httpError(400, `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`);
}

/**
 * Answers one AdmissionReview. `body` may be cut at MAX_REQUEST_BODY_BYTES + 1 by the caller:
 * anything longer than the limit is refused without being parsed.
 */
export function reviewAdmission(body: Buffer, contentType: string | undefined): AdmissionReply {
  if (body.length > MAX_REQUEST_BODY_BYTES) return bodyTooLarge();
  if (body.length === 0) return httpError(400, 'no body found');
  if (contentType !== JSON_CONTENT_TYPE) return httpError(415, `invalid Content-Type, want \`${JSON_CONTENT_TYPE}\``);

  const decoded = decodeReview(body);
  if ('error' in decoded)
    return reply(undefined, denied('', decoded.error), { type: 'undecodable', message: decoded.error });
  const { review, apiVersion } = decoded;
  const request = review['request'];
  if (!isObject(request)) {
    const message = 'could not decode object: the AdmissionReview has no request';
    return reply(apiVersion, denied('', message), { type: 'undecodable', message });
  }
  const uid = typeof request['uid'] === 'string' ? request['uid'] : '';
  // JSON.parse reads any depth; everything after it is bounded by this check.
  const deepAt = body.length < MIN_BYTES_TOO_DEEP ? undefined : tooDeep(review, MAX_JSON_DEPTH);
  if (deepAt !== undefined) {
    const message = `could not decode body: exceeded max depth of ${MAX_JSON_DEPTH} nested JSON values at ${deepAt}`;
    return reply(apiVersion, denied(uid, message), { type: 'undecodable', message });
  }
  const resource = resourceOf(request);
  const dryRun = request['dryRun'] === true;
  const fail = (reason: FailureReason, message: string): AdmissionReply =>
    reply(apiVersion, denied(uid, message), { type: 'failed', reason, resource, dryRun, message, allowed: false });

  const operation = request['operation'];
  if (operation !== 'CREATE' && operation !== 'UPDATE') {
    // Deletes and connects are never checked; istiod still counts them under this reason.
    const message = `unsupported webhook operation ${typeof operation === 'string' ? operation : quote(operation)}`;
    return reply(
      apiVersion,
      { uid, allowed: true },
      { type: 'failed', reason: FAILURE_REASONS.unsupportedOperation, resource, dryRun, message, allowed: true },
    );
  }

  const object = request['object'] ?? null;
  if (object !== null && !isObject(object))
    return fail(FAILURE_REASONS.decodeError, 'cannot decode configuration: the object is not a JSON object');
  const obj: JsonObject = object ?? {};
  for (const field of ['metadata', 'spec'] as const) {
    if (obj[field] !== undefined && obj[field] !== null && !isObject(obj[field])) {
      return fail(FAILURE_REASONS.decodeError, `cannot decode configuration: ${field} must be a JSON object`);
    }
  }

  const verdict = validateConfig(obj);
  if (verdict.outcome === 'unknown-kind') return fail(FAILURE_REASONS.unknownType, clip(verdict.message));
  if (verdict.outcome === 'not-an-object') return fail(FAILURE_REASONS.decodeError, verdict.message);
  const { result, meta } = verdict;
  if (result.errors.length > 0) {
    // istiod's two outcomes: the spec does not convert to its proto (crd_conversion_error, "error
    // decoding configuration"), or it converts and fails validation (invalid_config).
    const what = verdict.decodeError ? 'error decoding configuration' : 'configuration is invalid';
    return fail(
      verdict.decodeError ? FAILURE_REASONS.conversionError : FAILURE_REASONS.invalidConfig,
      `${what}: ${result.errors.map(formatError).join('; ')}`,
    );
  }
  const extra = unknownTopLevelKeys(obj);
  if (extra.length > 0) {
    const kind =
      isObject(request['kind']) && typeof request['kind']['kind'] === 'string'
        ? request['kind']['kind']
        : verdict.schema.kind;
    const namespace = typeof request['namespace'] === 'string' ? request['namespace'] : meta.namespace;
    return fail(
      FAILURE_REASONS.invalidConfig,
      clip(`unknown field "${extra[0]}" on ${kind} resource ${namespace}/${meta.name}`),
    );
  }
  const response: AdmissionResponse = { uid, allowed: true };
  if (result.warnings.length > 0) response.warnings = result.warnings;
  return reply(apiVersion, response, { type: 'passed', resource });
}
