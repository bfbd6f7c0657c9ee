// Builders for hostile AdmissionReviews: values nested thousands of levels deep (which
// JSON.stringify itself cannot write) and reviews around them, as raw bytes.

const DEEP = '@@deep@@';

/** An array nested `depth` levels: [[[...]]]. */
export function deepArray(depth: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

/** An object nested `depth` levels under key `a`, with `leaf` at the bottom. */
export function deepObject(depth: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** The JSON text of deepObject(depth, leaf), written without recursion. */
export function deepObjectText(depth: number, leafJson = '1'): string {
  return '{"a":'.repeat(depth) + leafJson + '}'.repeat(depth);
}

/** A placeholder to put where `reviewBytes` should splice in raw JSON text. */
export const DEEP_PLACEHOLDER = DEEP;

export interface ReviewOptions {
  uid?: string;
  operation?: unknown;
  /** Raw JSON text that replaces DEEP_PLACEHOLDER wherever it appears in the review. */
  splice?: string;
}

/** An admission.k8s.io/v1 AdmissionReview of `object`, as the bytes the API server sends. */
export function reviewBytes(object: unknown, opts: ReviewOptions = {}): Buffer {
  const field = (name: string): string => {
    const v = typeof object === 'object' && object !== null ? (object as Record<string, unknown>)[name] : undefined;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- hostile objects put arrays and objects here too; the review carries them as String() prints them
    return v === undefined || v === null ? '' : String(v);
  };
  const apiVersion = field('apiVersion');
  const kind = field('kind');
  const slash = apiVersion.indexOf('/');
  let text = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: opts.uid ?? 'hostile-1',
      kind: { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind },
      resource: {
        group: apiVersion.slice(0, slash),
        version: apiVersion.slice(slash + 1),
        resource: `${kind.toLowerCase()}s`,
      },
      namespace: 'default',
      operation: opts.operation ?? 'CREATE',
      object,
      dryRun: false,
    },
  });
  if (opts.splice !== undefined) text = text.split(JSON.stringify(DEEP)).join(opts.splice);
  return Buffer.from(text);
}

export function virtualService(spec: object): object {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'vs', namespace: 'default' },
    spec,
  };
}

export function envoyFilter(value: unknown): object {
  return {
    apiVersion: 'networking.istio.io/v1alpha3',
    kind: 'EnvoyFilter',
    metadata: { name: 'ef', namespace: 'default' },
    spec: { configPatches: [{ applyTo: 'CLUSTER', patch: { operation: 'MERGE', value } }] },
  };
}

/** The most JSON containers enclosing any value of `text` (strings are skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}
