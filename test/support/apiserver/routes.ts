// URL paths and HTTP methods to (resource, namespace, name, subresource) and RBAC verbs, and the
// small HTTP plumbing of the test API server.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { findResource, type ServedResource } from './resources';
import { ApiError } from './status';

/** Largest request body accepted (the real server's limit is 3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface Route {
  resource: ServedResource;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** /api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]] or /apis/GROUP/VERSION/[namespaces/NS/]PLURAL[/NAME[/SUB]]. */
export function parseRoute(parts: string[]): Route | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const inner = findResource(group, version, rest[2]!);
    if (inner?.namespaced) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  const resource = findResource(group, version, rest[0]!);
  if (!resource || rest.length > 3) return undefined;
  if (resource.namespaced !== (namespace !== undefined) && !(resource.namespaced && rest.length === 1))
    return undefined;
  return {
    resource,
    version,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(rest[1] !== undefined ? { name: rest[1] } : {}),
    ...(rest[2] !== undefined ? { subresource: rest[2] } : {}),
  };
}

export function verbOf(method: string, route: Route, query: URLSearchParams): string {
  switch (method) {
    case 'GET':
      if (route.name !== undefined) return 'get';
      return query.get('watch') === 'true' || query.get('watch') === '1' ? 'watch' : 'list';
    case 'POST':
      return route.name === undefined ? 'create' : 'unsupported';
    case 'PUT':
      return route.name !== undefined ? 'update' : 'unsupported';
    case 'PATCH':
      return route.name !== undefined ? 'patch' : 'unsupported';
    case 'DELETE':
      return route.name !== undefined ? 'delete' : 'deletecollection';
    default:
      return 'unsupported';
  }
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new ApiError(413, 'RequestEntityTooLarge', `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function send(res: ServerResponse, status: number, body: unknown, retryAfterSeconds?: number): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = {
    'Content-Type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
  };
  if (retryAfterSeconds !== undefined) headers['Retry-After'] = String(retryAfterSeconds);
  res.writeHead(status, headers);
  res.end(text);
}
