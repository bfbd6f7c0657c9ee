// Writing ServiceEntry status.addresses. In Kubernetes mode: a JSON patch on the status
// subresource through KubeWriter, guarded as istiod guards it. The `test` op carries the value the
// allocator decided from, so a concurrent writer that changed status.addresses since makes the
// whole patch fail (422) and the entry is decided again from fresh data:
//
//   status present:  test /status/addresses == <as read, null when absent>; replace /status/addresses
//   status absent:   test /status == null; add /status {}; add /status/addresses
//
// (The API server's JSON patch reads a missing key as null for `test` and lets `replace` set a
// missing key of an object, so the first form also covers a status without addresses.)
// Conditions and other status fields are never touched. In local mode the store plays the API
// server: see LocalStatusWriter.

import { KINDS } from '../../store/kinds';
import { isNotFound } from '../../store/kube/api-errors';
import { KubeApiError } from '../../store/kube/client';
import type { JsonPatchOp, KubeWriter } from '../../store/kube/writes';
import type { KubeObject, ObjectStore, StoreWriter } from '../../store/types';
import { statusAddressesRaw, type ServiceEntryAddress } from './entries';

/** The `test` guard failed: status.addresses is no longer what the allocator read. */
export class StaleStatusError extends Error {
  override name = 'StaleStatusError';
}

export interface AddressStatusWriter {
  /**
   * Sets status.addresses of the entry read as `current`. Resolves to the entry as written, or
   * undefined when it no longer exists; rejects with StaleStatusError when another writer changed
   * status.addresses since `current` was read. `signal` cancels the write and its retries (the
   * leadership it was made under has ended).
   */
  write(current: KubeObject, addresses: ServiceEntryAddress[], signal?: AbortSignal): Promise<KubeObject | undefined>;
  /**
   * The entry as the API server holds it now, or undefined when it does not exist: what decides
   * whether its addresses may be freed (after a failed write, or when the store stops showing it).
   */
  read(namespace: string, name: string, signal?: AbortSignal): Promise<KubeObject | undefined>;
  /** Every entry the API server holds, whatever the store's discoverySelectors show. */
  list(signal?: AbortSignal): Promise<KubeObject[]>;
}

/** The JSON patch for `addresses` over the entry as read in `current`. */
export function addressesPatch(current: KubeObject, addresses: ServiceEntryAddress[]): JsonPatchOp[] {
  if (current.status === undefined || current.status === null)
    return [
      { op: 'test', path: '/status', value: null },
      { op: 'add', path: '/status', value: {} },
      { op: 'add', path: '/status/addresses', value: addresses },
    ];
  return [
    { op: 'test', path: '/status/addresses', value: statusAddressesRaw(current) },
    { op: 'replace', path: '/status/addresses', value: addresses },
  ];
}

const SERVICE_ENTRIES = {
  group: KINDS.ServiceEntry.group,
  version: KINDS.ServiceEntry.versions[0] ?? 'v1',
  plural: KINDS.ServiceEntry.plural,
};

/** The status subresource through the one write path. */
export class KubeAddressStatusWriter implements AddressStatusWriter {
  constructor(private readonly writer: Pick<KubeWriter, 'patch' | 'get' | 'list'>) {}

  read(namespace: string, name: string, signal?: AbortSignal): Promise<KubeObject | undefined> {
    return this.writer.get({ ...SERVICE_ENTRIES, namespace, name }, signal ? { signal } : {});
  }

  /** One unpaged list: ServiceEntries number in the thousands at most, and each is small. */
  async list(signal?: AbortSignal): Promise<KubeObject[]> {
    const { items } = await this.writer.list(SERVICE_ENTRIES, {}, signal ? { signal } : {});
    return items;
  }

  async write(
    current: KubeObject,
    addresses: ServiceEntryAddress[],
    signal?: AbortSignal,
  ): Promise<KubeObject | undefined> {
    const ref = { ...SERVICE_ENTRIES, namespace: current.metadata.namespace ?? '', name: current.metadata.name };
    try {
      return await this.writer.patch(
        ref,
        { type: 'json', ops: addressesPatch(current, addresses) },
        { status: true, ...(signal ? { signal } : {}) },
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (err instanceof KubeApiError && err.status === 422) throw new StaleStatusError(err.message);
      throw err;
    }
  }
}

/**
 * Local mode: the folder is the API server's stand-in, and istiod-ts never writes into it. The
 * addresses are set on the store's copy of the entry, as a status write would come back through
 * an informer; the YAML's own status.addresses is read first, like a cluster's status, so an
 * address written there is kept.
 */
export class LocalStatusWriter implements AddressStatusWriter {
  private writes = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly storeWriter: Pick<StoreWriter, 'upsert'>,
  ) {}

  read(namespace: string, name: string): Promise<KubeObject | undefined> {
    return Promise.resolve(this.store.get('ServiceEntry', namespace, name));
  }

  list(): Promise<KubeObject[]> {
    return Promise.resolve(this.store.list('ServiceEntry'));
  }

  write(current: KubeObject, addresses: ServiceEntryAddress[]): Promise<KubeObject | undefined> {
    const stored = this.store.get('ServiceEntry', current.metadata.namespace, current.metadata.name);
    if (!stored) return Promise.resolve(undefined);
    if (JSON.stringify(statusAddressesRaw(stored)) !== JSON.stringify(statusAddressesRaw(current)))
      return Promise.reject(new StaleStatusError('status.addresses changed since it was read'));
    const status = typeof stored.status === 'object' && stored.status !== null ? stored.status : {};
    // A new resourceVersion, as the API server would give: the store ignores an update without one.
    const resourceVersion = `${stored.metadata.resourceVersion ?? ''}+ipallocate.${++this.writes}`;
    const next: KubeObject = {
      ...stored,
      metadata: { ...stored.metadata, resourceVersion },
      status: { ...status, addresses },
    };
    this.storeWriter.upsert('ServiceEntry', [next]);
    return Promise.resolve(next);
  }
}
