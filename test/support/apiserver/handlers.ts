// The REST verbs on one resource: get, list (with limit/continue), create, update, patch, delete,
// deletecollection, with the API server's preconditions, dry runs and error Status objects.

import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors';
import { PATCH_TYPES, PatchError } from './patch';
import { apiVersionFor, resourceKey, type ServedResource } from './resources';
import { ApiError, errors } from './status';
import type { Json, Storage, StoredObject } from './storage';
import { reviewToken, type TokenIdentity } from './tokens';
import { deletedPodRefusal } from './bound-tokens';

export interface ResourceRequest {
  resource: ServedResource;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  query: URLSearchParams;
  contentType: string;
  body: unknown;
}

export interface Reply {
  status: number;
  body: unknown;
}

export interface HandlerContext {
  storage: Storage;
  tokens: ReadonlyMap<string, TokenIdentity>;
}

interface ContinueToken {
  rv: number;
  after: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(text, 'base64url').toString()) as ContinueToken;
    if (typeof t.rv === 'number' && typeof t.after === 'string') return t;
  } catch {
    // fall through to the error below
  }
  throw errors.badRequest('continue key is not valid: malformed token');
}

export function matcherOf(query: URLSearchParams): (o: Record<string, unknown>) => boolean {
  try {
    const labels = parseLabelSelector(query.get('labelSelector'));
    const fields = parseFieldSelector(query.get('fieldSelector'));
    return (o) => labels(o) && fields(o);
  } catch (err) {
    if (err instanceof SelectorError) throw errors.badRequest(err.message);
    throw err;
  }
}

/** Built-in kinds' list items carry no apiVersion/kind on the wire; custom resources' do. */
function listItem(r: ServedResource, version: string, o: StoredObject): StoredObject {
  if (r.crd) return { ...o, apiVersion: apiVersionFor(r, version), kind: r.kind };

  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

function withType(r: ServedResource, version: string, o: StoredObject): StoredObject {
  return { ...o, apiVersion: apiVersionFor(r, version), kind: r.kind };
}

export function list(ctx: HandlerContext, req: ResourceRequest): Reply {
  const { resource: r } = req;
  const matches = matcherOf(req.query);
  const limit = Number(req.query.get('limit') ?? '0');
  const continueText = req.query.get('continue');
  let after = '';
  if (continueText) {
    const token = decodeContinue(continueText);
    if (token.rv < ctx.storage.oldestUsableRv()) {
      throw errors.expired(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
      );
    }
    after = token.after;
  }
  const {
    items: page,
    more,
    remaining,
  } = ctx.storage.page(
    resourceKey(r.group, r.plural),
    after,
    limit,
    (o) => (req.namespace === undefined || o.metadata.namespace === req.namespace) && matches(o),
  );
  const metadata: Record<string, unknown> = { resourceVersion: String(ctx.storage.currentRv()) };
  const last = page[page.length - 1];
  if (limit > 0 && more && last) {
    metadata['continue'] = encodeContinue({ rv: ctx.storage.currentRv(), after: ctx.storage.keyOf(last) });
    metadata['remainingItemCount'] = remaining;
  }
  return {
    status: 200,
    body: {
      kind: `${r.kind}List`,
      apiVersion: apiVersionFor(r, req.version),
      metadata,
      items: page.map((o) => listItem(r, req.version, o)),
    },
  };
}

export function get(ctx: HandlerContext, req: ResourceRequest): Reply {
  const o = ctx.storage.get(resourceKey(req.resource.group, req.resource.plural), req.namespace, req.name!);
  if (!o) throw errors.notFound(req.resource, req.name!);
  return { status: 200, body: withType(req.resource, req.version, o) };
}

/** A field of the client's JSON in an error message: a string as sent, anything else as JSON. */
const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function bodyObject(req: ResourceRequest): StoredObject {
  // The body is the client's JSON: nothing about its shape holds until checked here.
  const raw = req.body;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw errors.badRequest('the body of the request must be a JSON object');
  const sent = raw as Json;
  if (!sent['metadata'] || typeof sent['metadata'] !== 'object') sent['metadata'] = { name: '' };
  const body = sent as StoredObject;
  const { resource: r } = req;
  const { kind, apiVersion } = body;
  if (kind !== undefined && kind !== r.kind)
    throw errors.badRequest(`the kind "${shown(kind)}" of the body does not match ${r.kind}`);
  if (apiVersion !== undefined && !r.versions.some((v) => apiVersionFor(r, v) === apiVersion)) {
    throw errors.badRequest(
      `the apiVersion "${shown(apiVersion)}" of the body does not match ${apiVersionFor(r, req.version)}`,
    );
  }
  if (r.namespaced) {
    if (req.namespace === undefined) throw errors.noSuchPath();
    if (body.metadata.namespace && body.metadata.namespace !== req.namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    body.metadata.namespace = req.namespace!;
  } else {
    delete body.metadata.namespace;
  }
  delete body.apiVersion;
  delete body.kind;
  return body;
}

const dryRun = (req: ResourceRequest) => req.query.getAll('dryRun').includes('All');

function checkDryRunValue(req: ResourceRequest): void {
  for (const v of req.query.getAll('dryRun')) if (v !== 'All') throw errors.badRequest(`Invalid dry run value: ${v}`);
}

export function create(ctx: HandlerContext, req: ResourceRequest): Reply {
  checkDryRunValue(req);
  const { resource: r } = req;
  if (r.kind === 'TokenReview') return tokenReview(ctx, req);
  const object = bodyObject(req);
  if (!object.metadata.name && !object.metadata.generateName)
    throw errors.invalid(r, '', 'metadata.name', 'Required value: name or generateName is required');
  ctx.storage.prepareCreate(object);
  const key = resourceKey(r.group, r.plural);
  if (ctx.storage.get(key, object.metadata.namespace, object.metadata.name))
    throw errors.alreadyExists(r, object.metadata.name);
  if (dryRun(req)) return { status: 201, body: withType(r, req.version, object) };
  return { status: 201, body: withType(r, req.version, ctx.storage.write(key, object, 'ADDED')) };
}

function tokenReview(ctx: HandlerContext, req: ResourceRequest): Reply {
  const body = req.body as { spec?: { token?: string; audiences?: string[] } } | undefined;
  const token = body?.spec?.token;
  if (!token) throw errors.invalid(req.resource, '', 'spec.token', 'Required value');
  const status =
    deletedPodRefusal(ctx.storage, ctx.tokens.get(token)) ?? reviewToken(ctx.tokens, token, body.spec?.audiences);
  return {
    status: 201,
    body: {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: body.spec,
      status,
    },
  };
}

/** Stores an update unless it changes nothing (the API server does not bump the version then). */
function commit(ctx: HandlerContext, req: ResourceRequest, stored: StoredObject, next: StoredObject): Reply {
  const { resource: r } = req;
  const sent = next.metadata.resourceVersion;
  if (sent !== undefined && sent !== '' && sent !== stored.metadata.resourceVersion)
    throw errors.conflict(r, stored.metadata.name);
  next.metadata.uid = stored.metadata.uid!;
  next.metadata.creationTimestamp = stored.metadata.creationTimestamp!;
  next.metadata.namespace = stored.metadata.namespace!;
  if (!r.namespaced) delete next.metadata.namespace;
  if (r.subresources.includes('status')) {
    // The main resource ignores status and the status subresource ignores everything else.
    if (req.subresource === 'status') next = { ...stored, status: next['status'] };
    else next['status'] = stored['status'];
    if (next['status'] === undefined) delete next['status'];
  }

  const { resourceVersion: _before, ...storedMeta } = stored.metadata;

  const { resourceVersion: _after, ...nextMeta } = next.metadata;
  if (JSON.stringify({ ...stored, metadata: storedMeta }) === JSON.stringify({ ...next, metadata: nextMeta })) {
    return { status: 200, body: withType(r, req.version, stored) };
  }
  if (req.subresource !== 'status' && JSON.stringify(stored['spec']) !== JSON.stringify(next['spec'])) {
    next.metadata.generation = (stored.metadata.generation ?? 1) + 1;
  }
  if (dryRun(req)) return { status: 200, body: withType(r, req.version, next) };
  return {
    status: 200,
    body: withType(r, req.version, ctx.storage.write(resourceKey(r.group, r.plural), next, 'MODIFIED')),
  };
}

export function update(ctx: HandlerContext, req: ResourceRequest): Reply {
  checkDryRunValue(req);
  const next = bodyObject(req);
  if (next.metadata.name !== req.name)
    throw errors.badRequest(
      `the name of the object (${next.metadata.name}) does not match the name on the URL (${req.name})`,
    );
  const stored = ctx.storage.get(resourceKey(req.resource.group, req.resource.plural), req.namespace, req.name);
  if (!stored) throw errors.notFound(req.resource, req.name);
  return commit(ctx, req, stored, next);
}

export function patch(ctx: HandlerContext, req: ResourceRequest): Reply {
  checkDryRunValue(req);
  const apply = Object.hasOwn(PATCH_TYPES, req.contentType)
    ? PATCH_TYPES[req.contentType as keyof typeof PATCH_TYPES]
    : undefined;
  if (!apply) throw errors.unsupportedMediaType(req.contentType);
  const stored = ctx.storage.get(resourceKey(req.resource.group, req.resource.plural), req.namespace, req.name!);
  if (!stored) throw errors.notFound(req.resource, req.name!);
  // A patch can turn the object into any JSON at all: its result is checked before it is stored.
  let patched: unknown;
  try {
    patched = apply(structuredClone(stored), req.body);
  } catch (err) {
    if (err instanceof PatchError) throw new ApiError(422, 'Invalid', err.message);
    throw err;
  }
  if (!patched || typeof patched !== 'object' || !(patched as Json)['metadata'])
    throw errors.badRequest('the patch removed the object metadata');
  const next = patched as StoredObject;
  if (next.metadata.name !== stored.metadata.name) throw errors.badRequest('the patch changed metadata.name');
  delete next['apiVersion'];
  delete next['kind'];
  // A resourceVersion in the patch is a precondition; without one the patch applies to the latest.
  const sentRv = (req.body as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion;
  if (sentRv === undefined) next.metadata.resourceVersion = stored.metadata.resourceVersion!;
  return commit(ctx, req, stored, next);
}

export function remove(ctx: HandlerContext, req: ResourceRequest): Reply {
  checkDryRunValue(req);
  const { resource: r } = req;
  const key = resourceKey(r.group, r.plural);
  const stored = ctx.storage.get(key, req.namespace, req.name!);
  if (!stored) throw errors.notFound(r, req.name!);
  const pre = (req.body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)?.preconditions;
  if (pre?.uid !== undefined && pre.uid !== stored.metadata.uid) {
    throw new ApiError(
      409,
      'Conflict',
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${stored.metadata.uid}`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== stored.metadata.resourceVersion)
    throw errors.conflict(r, req.name!);
  if (dryRun(req)) return { status: 200, body: withType(r, req.version, stored) };
  return { status: 200, body: withType(r, req.version, ctx.storage.remove(key, req.namespace, req.name!)!) };
}

export function removeCollection(ctx: HandlerContext, req: ResourceRequest): Reply {
  checkDryRunValue(req);
  const { resource: r } = req;
  const key = resourceKey(r.group, r.plural);
  const matches = matcherOf(req.query);
  const doomed = ctx.storage
    .list(key)
    .filter((o) => (req.namespace === undefined || o.metadata.namespace === req.namespace) && matches(o));
  if (!dryRun(req)) for (const o of doomed) ctx.storage.remove(key, o.metadata.namespace, o.metadata.name);
  return {
    status: 200,
    body: { kind: `${r.kind}List`, apiVersion: apiVersionFor(r, req.version), metadata: {}, items: doomed },
  };
}
