// Shared set-up for the Kubernetes integration tests: a test API server, a client for it, and a
// KubeSource feeding a MemoryStore with millisecond-scale retry timings.

import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { KubeSource, type KubeSourceOptions } from '../../../src/store/kube/source';
import type { WatchTiming } from '../../../src/store/kube/kind-watcher';
import { MemoryStore } from '../../../src/store/memory-store';
import { KINDS, type KindId, apiVersionOf } from '../../../src/store/kinds';
import { TestApiServer } from '../../support/apiserver';
import { FAST_WATCH_TIMING } from '../../support/apiserver/fixtures';
import { logs } from '../../../src/log/logger';

// Retries and re-lists are logged at warn; the tests provoke them on purpose.
export const TEST_LOG_LEVELS = process.env['KUBE_TEST_LOG'] ?? 'kube:error,leader:error,multicluster:error';
logs.configure(TEST_LOG_LEVELS);

/** The tests' watch timing, shared with the CA tests through test/support. */
export const FAST_TIMING: WatchTiming = FAST_WATCH_TIMING;

export async function startServer(): Promise<{ server: TestApiServer; client: KubeClient }> {
  const server = await TestApiServer.start();
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()), 'istiod-ts-test');
  return { server, client };
}

export function startSource(
  client: KubeClient,
  extra: Partial<KubeSourceOptions> = {},
): { store: MemoryStore; source: KubeSource } {
  const store = new MemoryStore();
  const source = new KubeSource({
    client,
    writer: store,
    systemNamespace: 'istio-system',
    timing: FAST_TIMING,
    ...extra,
  });
  return { store, source };
}

/** "ns/name@uid" of every object of a kind, sorted: what the store and the server must agree on. */
export function storeKeys(store: MemoryStore, kind: KindId): string[] {
  return store
    .list(kind)
    .map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}@${o.metadata.uid}#${o.metadata.resourceVersion}`)
    .sort();
}

export function serverKeys(
  server: TestApiServer,
  kind: KindId,
  filter: (o: { metadata: { namespace?: string; name: string } }) => boolean = () => true,
): string[] {
  return server
    .list(apiVersionOf(KINDS[kind]), KINDS[kind].kind)
    .filter(filter)
    .map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}@${o.metadata.uid}#${o.metadata.resourceVersion}`)
    .sort();
}
