// The istio-cni pods, in a small store of their own. The shared store's pods pass meshConfig's
// discoverySelectors, and the namespace istio-cni runs in (istio-system, kube-system) is often
// not selected: istiod gives its untainter an informer of its own for the same reason. This one is
// narrower than istiod's: one namespace and the istio-cni label, selected by the API server, so it
// holds about one slimmed pod per node, and only while this replica leads.

import { DEFAULT_WATCH_TIMING, KindWatcher, type WatchTiming } from '../../store/kube/kind-watcher';
import type { KubeClient } from '../../store/kube/client';
import { MemoryStore } from '../../store/memory-store';
import type { KubeObject, ObjectStore } from '../../store/types';
import { CNI_POD_FIELD_SELECTOR, CNI_POD_LABEL_SELECTOR } from './decision';

/** Index of the cni pod store: node name -> the istio-cni pods scheduled there. */
export const CNI_PODS_BY_NODE = 'cni-pods-by-node';
const SYNC_PART = 'istio-cni pods';

/** The node a pod is scheduled on, or undefined while it is pending. */
export function podNodeName(pod: KubeObject): string | undefined {
  const name = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

export interface CniPodWatchOptions {
  client: KubeClient;
  /** --cniNamespace. */
  namespace: string;
  timing?: Partial<WatchTiming>;
}

/** List/watch of the istio-cni pods of one namespace (Failed ones left out by the server) into a store indexed by node. */
export class CniPodWatch {
  private readonly memory = new MemoryStore();
  private readonly watcher: KindWatcher;

  constructor(options: CniPodWatchOptions) {
    this.memory.addIndex('Pod', CNI_PODS_BY_NODE, (pod) => {
      const node = podNodeName(pod);
      return node === undefined ? [] : [node];
    });
    this.memory.expectSync(SYNC_PART);
    this.watcher = new KindWatcher({
      client: options.client,
      kind: 'Pod',
      namespace: options.namespace,
      labelSelector: CNI_POD_LABEL_SELECTOR,
      fieldSelector: CNI_POD_FIELD_SELECTOR,
      timing: { ...DEFAULT_WATCH_TIMING, ...options.timing },
      onChanges: (changes) =>
        this.memory.apply(
          changes.map((c) => ({ kind: 'Pod' as const, object: c.object, deleted: c.deleted === true })),
        ),
      onSynced: () => this.memory.markSynced(SYNC_PART),
    });
  }

  /** The pods, for reading and for change events. */
  get store(): ObjectStore {
    return this.memory;
  }

  start(): void {
    this.watcher.start();
  }

  async stop(): Promise<void> {
    await this.watcher.stop();
  }
}
