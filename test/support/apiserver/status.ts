// metav1.Status objects, the body of every API error (and of watch ERROR events).

import type { ServedResource } from './resources';

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; retryAfterSeconds?: number };
  code: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusBody['details'],
  ) {
    super(message);
  }

  toStatus(): StatusBody {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** "pods" or "leases.coordination.k8s.io", the way the API server names a resource in messages. */
export function qualified(resource: ServedResource): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

export const errors = {
  notFound: (r: ServedResource, name: string) =>
    new ApiError(404, 'NotFound', `${qualified(r)} "${name}" not found`, { name, group: r.group, kind: r.plural }),
  alreadyExists: (r: ServedResource, name: string) =>
    new ApiError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, {
      name,
      group: r.group,
      kind: r.plural,
    }),
  conflict: (r: ServedResource, name: string) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, group: r.group, kind: r.plural },
    ),
  invalid: (r: ServedResource, name: string, field: string, problem: string) =>
    new ApiError(422, 'Invalid', `${r.kind} "${name}" is invalid: ${field}: ${problem}`, {
      name,
      group: r.group,
      kind: r.kind,
    }),
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  noSuchPath: () => new ApiError(404, 'NotFound', 'the server could not find the requested resource'),
  methodNotAllowed: (method: string) =>
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method})`,
    ),
  expired: (message: string) => new ApiError(410, 'Expired', message),
  gone: (rv: number, oldest: number) => new ApiError(410, 'Expired', `too old resource version: ${rv} (${oldest})`),
  unsupportedMediaType: (type: string) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json; got ${type}`,
    ),
};
