// A MemoryStore fed by a KubeSource from the test API server and synced: what a CA replica reads
// in Kubernetes mode. The CA tests and the CA bench start one per replica.

import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/store/kube/client';
import { KubeSource } from '../../../src/store/kube/source';
import type { WatchTiming } from '../../../src/store/kube/kind-watcher';
import type { KindId } from '../../../src/store/kinds';
import { MemoryStore } from '../../../src/store/memory-store';

export async function syncedKubeStore(
  kubeConfig: KubeConfig,
  opts: { kinds?: KindId[]; timing?: WatchTiming } = {},
): Promise<{ store: MemoryStore; source: KubeSource }> {
  const store = new MemoryStore();
  const source = new KubeSource({
    client: new KubeClient(kubeConfig),
    writer: store,
    systemNamespace: 'istio-system',
    kinds: opts.kinds ?? ['Namespace', 'Pod'],
    ...(opts.timing ? { timing: opts.timing } : {}),
  });
  await source.start();
  await store.whenSynced();
  return { store, source };
}
