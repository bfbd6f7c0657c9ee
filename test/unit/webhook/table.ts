// Shared helpers for the per-kind table tests: build an object of a kind, validate it, and
// compare the verdict with the case's expectation.

import { formatError } from '../../../src/webhook/validators/common/report';
import { validateConfig } from '../../../src/webhook/validators/registry';

const API_VERSIONS: Record<string, string> = {
  AuthorizationPolicy: 'security.istio.io/v1',
  PeerAuthentication: 'security.istio.io/v1',
  RequestAuthentication: 'security.istio.io/v1',
  VirtualService: 'networking.istio.io/v1',
  DestinationRule: 'networking.istio.io/v1',
  Gateway: 'networking.istio.io/v1',
  ServiceEntry: 'networking.istio.io/v1',
  Sidecar: 'networking.istio.io/v1',
  WorkloadEntry: 'networking.istio.io/v1',
  WorkloadGroup: 'networking.istio.io/v1',
  EnvoyFilter: 'networking.istio.io/v1alpha3',
  ProxyConfig: 'networking.istio.io/v1beta1',
  Telemetry: 'telemetry.istio.io/v1',
  WasmPlugin: 'extensions.istio.io/v1alpha1',
  TrafficExtension: 'extensions.istio.io/v1alpha1',
};

export interface Meta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Verdict {
  errors: string[];
  warnings: string[];
}

export function validate(kind: string, spec: unknown, meta: Meta = {}): Verdict {
  const object = {
    apiVersion: API_VERSIONS[kind],
    kind,
    metadata: {
      name: meta.name ?? 'example',
      namespace: meta.namespace ?? 'default',
      labels: meta.labels,
      annotations: meta.annotations,
    },
    spec,
  };
  const verdict = validateConfig(object);
  if (verdict.outcome !== 'validated') throw new Error(`${kind} is not a known kind: ${verdict.message}`);
  return { errors: verdict.result.errors.map(formatError), warnings: verdict.result.warnings };
}

/** An invalid case: the spec and a fragment of the expected "path: message" error. */
export type InvalidCase = [name: string, spec: unknown, error: string, meta?: Meta];
/** A valid case: the spec, and a fragment of the one warning it should draw, if any. */
export type ValidCase = [name: string, spec: unknown, warning?: string, meta?: Meta];

export function describeKind(kind: string, valid: ValidCase[], invalid: InvalidCase[]): void {
  describe(`${kind} validation`, () => {
    // Rows are padded to full length: jest reads a test function with more parameters than the
    // row has as one that takes a `done` callback.
    const validRows = valid.map(([n, s, w, m]): [string, unknown, string, Meta] => [n, s, w ?? '', m ?? {}]);
    const invalidRows = invalid.map(([n, s, e, m]): [string, unknown, string, Meta] => [n, s, e, m ?? {}]);
    test.each(validRows)('accepts: %s', (_name, spec, warning, meta) => {
      const v = validate(kind, spec, meta);
      expect(v.errors).toEqual([]);
      // A valid case names the warning it expects, or expects none: a stray warning on a good
      // object is noise every user of the API sees on every apply.
      if (warning) expect(v.warnings.join('\n')).toContain(warning);
      else expect(v.warnings).toEqual([]);
    });
    test.each(invalidRows)('rejects: %s', (_name, spec, error, meta) => {
      const v = validate(kind, spec, meta);
      expect(v.errors.join('\n')).toContain(error);
    });
  });
}
