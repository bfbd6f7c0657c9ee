// What a kind's validator sees: the object's identity and its decoded spec.

import type { JsonObject } from './common/fields';
import type { Report } from './common/report';

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Validates `spec` (path "spec"), adding errors and warnings to the report. */
export type SpecValidator = (r: Report, spec: JsonObject, meta: ObjectMeta) => void;
