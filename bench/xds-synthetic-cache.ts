// A ResourceCache with N realistic pod workloads (real istio.workload.Address encodings, ~250
// bytes each) for the xDS bench, and a way to change one pod and know when the change happened.

import { encodeAddress, versionOf } from '../src/ambient/codec';
import { TunnelProtocol, WorkloadType } from '../src/ambient/messages';
import { ADDRESS_TYPE_URL, ChangeSet, ResourceCache, XdsResource, XdsTypeUrl } from '../src/contract/xds-resources';

export const NODES = 1_000;

function ip(i: number): Uint8Array {
  return Uint8Array.from([10, (i >> 16) & 255, (i >> 8) & 255, i & 255]);
}

export function workloadName(i: number): string {
  return `Kubernetes//Pod/ns-${i % 100}/app-${i % 500}-${i}`;
}

function encodeWorkload(i: number, revision: number): XdsResource {
  const ns = `ns-${i % 100}`;
  const app = `app-${i % 500}`;
  const bytes = encodeAddress({
    workload: {
      uid: workloadName(i),
      name: `${app}-${i}`,
      namespace: ns,
      addresses: [ip(i)],
      tunnelProtocol: TunnelProtocol.HBONE,
      serviceAccount: `sa-${i % 50}`,
      node: `node-${i % NODES}`,
      canonicalName: app,
      canonicalRevision: `v${revision}`,
      workloadType: WorkloadType.POD,
      workloadName: app,
      services: { [`${ns}/${app}.${ns}.svc.cluster.local`]: { ports: [{ servicePort: 80, targetPort: 8080 }] } },
      clusterId: 'Kubernetes',
    },
  });
  return { name: workloadName(i), version: versionOf(bytes), bytes };
}

export class SyntheticCache implements ResourceCache {
  private readonly workloads: XdsResource[] = [];
  private readonly revisions: number[] = [];
  private readonly listeners = new Set<(changes: readonly ChangeSet[]) => void>();
  private readonly empty = new Map<string, XdsResource>();

  constructor(readonly size: number) {
    for (let i = 0; i < size; i++) {
      this.workloads.push(encodeWorkload(i, 1));
      this.revisions.push(1);
    }
  }

  /** Bytes of all workloads together. */
  totalBytes(): number {
    return this.workloads.reduce((n, w) => n + w.bytes.length, 0);
  }

  /** Changes pod i (a new revision label) and emits its change set; returns the new version. */
  change(i: number): XdsResource {
    const rev = ++this.revisions[i]!;
    const w = encodeWorkload(i, rev);
    this.workloads[i] = w;
    const sets: ChangeSet[] = [{ typeUrl: ADDRESS_TYPE_URL, updated: [w.name], removed: [] }];
    for (const l of this.listeners) l(sets);
    return w;
  }

  get(typeUrl: XdsTypeUrl, name: string): XdsResource | undefined {
    if (typeUrl !== ADDRESS_TYPE_URL) return this.empty.get(name);
    const i = Number(name.slice(name.lastIndexOf('-') + 1));
    const w = this.workloads[i];
    return w && w.name === name ? w : undefined;
  }

  all(typeUrl: XdsTypeUrl): Iterable<XdsResource> {
    return typeUrl === ADDRESS_TYPE_URL ? this.workloads : [];
  }

  subscribe(listener: (changes: readonly ChangeSet[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  resolveAddress(key: string): string[] {
    return this.get(ADDRESS_TYPE_URL, key) ? [key] : [];
  }

  workloadsOnNode(node: string): string[] {
    const n = Number(node.slice('node-'.length));
    const out: string[] = [];
    for (let i = n; i < this.size; i += NODES) out.push(workloadName(i));
    return out;
  }
}
