// The ambient index of a multicluster, multi-network mesh (AMBIENT_ENABLE_MULTI_NETWORK): one
// AmbientIndex per cluster (the config cluster's over its own store, each remote's over a
// RemoteFeed), joined here into what every ztunnel is served, as istiod joins its per-cluster
// collections:
// - workloads of every cluster on the local network pass through unchanged (their uids carry their
//   cluster id, so clusters never collide), with the NetworkGateway workloads;
// - workloads on another network are never sent; each GLOBAL service gets one split-horizon
//   workload per other network instead (split-horizon.ts);
// - Services are merged by `<ns>/<hostname>` (merged-services.ts);
// - Authorizations are the config cluster's.
//
// The cluster indexes keep their own encoded resources; this layer keeps only what it derives
// (merged services and split-horizon workloads, in an AddressTable of its own) and a few facts per
// workload (network, services, capacity, identity) to decide visibility and coalesce.

import { scopedLogger } from '../log/logger';
import type { MeshConfigSource } from '../mesh/types';
import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../store/clusters';
import type { KubeObject, ObjectStore } from '../store/types';
import {
  ADDRESS_TYPE_URL,
  AUTHORIZATION_TYPE_URL,
  type ChangeSet,
  type ResourceCache,
  type XdsResource,
  type XdsTypeUrl,
} from '../contract/xds-resources';
import { AddressTable } from '../ambient/address-table';
import { AmbientIndex, type AddressObserver } from '../ambient/ambient-index';
import type { Service, Workload } from '../ambient/messages';
import { NetworkGatewayTable } from '../ambient/network-gateways';
import { workloadTrustDomain, type AmbientFeatures } from '../ambient/settings';
import { spiffeId } from '../security/spiffe';
import { mergeServices, withRemoteNetworkSans, type ClusterService, type MergeScope } from './merged-services';
import { RemoteFeed } from './remote-feed';
import { scopeConfigsOf, serviceScope } from './service-scope';
import { splitHorizonWorkload } from './split-horizon';

const log = scopedLogger('multicluster');

export interface MeshIndexOptions {
  clusters: ClusterDirectory;
  mesh: MeshConfigSource;
  domain: string;
  systemNamespace?: string;
  revision?: string;
  enableDryRun?: boolean;
  features?: Partial<AmbientFeatures>;
}

/** What this layer remembers of a workload a cluster index derived. */
interface WorkloadFacts {
  clusterId: string;
  network: string;
  /** Service names the workload lists. */
  services: readonly string[];
  /** 0 when unset (counts 1 when coalesced). */
  capacity: number;
  namespace: string;
  serviceAccount: string;
}

interface ClusterPart {
  cluster: MeshCluster;
  index: AmbientIndex;
  feed?: RemoteFeed;
  unsubscribe: () => void;
}

const NETWORK_GATEWAY_PREFIX = 'NetworkGateway/';

export interface MeshIndexSummary {
  localNetwork: string;
  /** workloads: served; hidden: on another network (reached through split-horizon workloads). */
  clusters: { id: string; network: string; workloads: number; hidden: number; services: number }[];
  networkGateways: { network: string; cluster: string; gateway: string; address: string; hbonePort: number }[];
  splitHorizonWorkloads: number;
}

export class MeshIndex implements ResourceCache {
  readonly gateways: NetworkGatewayTable;
  private readonly parts = new Map<string, ClusterPart>();
  private readonly listeners = new Set<(changes: readonly ChangeSet[]) => void>();
  /** Merged services and split-horizon workloads. */
  private readonly merged = new AddressTable();
  private readonly facts = new Map<string, WorkloadFacts>();
  /** Service name -> cluster -> what that cluster derived. */
  private readonly services = new Map<string, Map<string, Service>>();
  /** `<network>;<service>` -> workload uids on that (non-local) network listing it. */
  private readonly remoteMembers = new Map<string, Set<string>>();
  /** Split-horizon workload uids derived per service. */
  private readonly splitBySource = new Map<string, string[]>();
  // Pending work of the batch being applied.
  private readonly dirtyServices = new Set<string>();
  private readonly pendingUpdated = new Set<string>();
  private readonly pendingRemoved = new Set<string>();
  private localNetwork = '';
  private readonly unsubscribe: (() => void)[] = [];
  private readonly localId: string;

  constructor(private readonly options: MeshIndexOptions) {
    this.localId = options.clusters.localId;
    this.gateways = new NetworkGatewayTable(this.localId);
    const local = options.clusters.get(this.localId);
    if (!local) throw new Error(`the cluster directory has no config cluster ${this.localId}`);
    // The config cluster first: its network decides which workloads the others' indexes hide.
    this.addCluster(local);
    const network = this.local.settings.network;
    if (network !== this.localNetwork) this.changeLocalNetwork(network);
    for (const c of options.clusters.list()) if (c.id !== this.localId) this.addCluster(c);
    this.recomputeAllServices();
    this.applyDirtyServices();
    // The first build has no earlier state: nothing is reported, as a single index reports none.
    this.merged.resources.takeChanges();
    this.pendingUpdated.clear();
    this.pendingRemoved.clear();
    this.unsubscribe.push(options.clusters.subscribe((e) => this.onCluster(e)));
    // A gateway picks the split-horizon workloads' destination (rare: everything is derived again).
    this.unsubscribe.push(
      this.gateways.subscribe(() => {
        this.recomputeAllServices();
        this.flush([]);
      }),
    );
    this.unsubscribe.push(
      options.mesh.subscribe((next, prev) => {
        if (JSON.stringify(scopeConfigsOf(next)) === JSON.stringify(scopeConfigsOf(prev))) return;
        // The config cluster's scopes are read here (remote feeds re-file their own Services).
        this.recomputeAllServices();
        this.flush([]);
      }),
    );
  }

  /** The config cluster's index: status conditions, explain and the debug pages read it. */
  get local(): AmbientIndex {
    const part = this.parts.get(this.localId);
    if (!part) throw new Error(`the config cluster ${this.localId} has no index`);
    return part.index;
  }

  /** For /debug/multicluster: per cluster what it contributes, and what this layer derived. */
  summary(): MeshIndexSummary {
    const clusters = new Map<string, { workloads: number; hidden: number; services: number }>();
    for (const id of this.parts.keys()) clusters.set(id, { workloads: 0, hidden: 0, services: 0 });
    for (const [uid, f] of this.facts) {
      const row = clusters.get(f.clusterId);
      if (!row) continue;
      if (this.visible(uid, f)) row.workloads++;
      else row.hidden++;
    }
    for (const byCluster of this.services.values())
      for (const id of byCluster.keys()) {
        const row = clusters.get(id);
        if (row) row.services++;
      }
    let split = 0;
    for (const uids of this.splitBySource.values()) split += uids.length;
    return {
      localNetwork: this.localNetwork,
      clusters: [...clusters].map(([id, row]) => ({
        id,
        network: this.parts.get(id)?.index.settings.network ?? '',
        ...row,
      })),
      networkGateways: this.gateways.all().map((g) => ({
        network: g.network,
        cluster: g.clusterId,
        gateway: `${g.source.namespace}/${g.source.name}`,
        address: g.addr,
        hbonePort: g.hbonePort,
      })),
      splitHorizonWorkloads: split,
    };
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    for (const part of this.parts.values()) this.closePart(part);
    this.parts.clear();
  }

  // ---- ResourceCache ----

  get(typeUrl: XdsTypeUrl, name: string): XdsResource | undefined {
    if (typeUrl === AUTHORIZATION_TYPE_URL) return this.local.get(typeUrl, name);
    const own = this.merged.resources.entries.get(name);
    if (own) return own;
    const f = this.facts.get(name);
    if (!f || !this.visible(name, f)) return undefined;
    return this.parts.get(f.clusterId)?.index.get(typeUrl, name);
  }

  *all(typeUrl: XdsTypeUrl): Iterable<XdsResource> {
    if (typeUrl === AUTHORIZATION_TYPE_URL) {
      yield* this.local.all(typeUrl);
      return;
    }
    yield* this.merged.resources.entries.values();
    for (const part of this.parts.values())
      for (const r of part.index.all(typeUrl)) {
        const f = this.facts.get(r.name);
        if (f && this.visible(r.name, f)) yield r;
      }
  }

  subscribe(listener: (changes: readonly ChangeSet[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  resolveAddress(key: string): string[] {
    const names = new Set<string>();
    const addWorkloads = (found: Iterable<string>) => {
      for (const n of found) {
        const f = this.facts.get(n);
        if (f && this.visible(n, f)) names.add(n);
      }
    };
    for (const n of this.merged.resolve(key)) {
      names.add(n);
      // A service brings its workloads of every cluster on this network.
      if (this.services.has(n)) for (const part of this.parts.values()) addWorkloads(part.index.resolveAddress(n));
    }
    for (const part of this.parts.values()) addWorkloads(part.index.resolveAddress(key));
    return [...names];
  }

  workloadsOnNode(node: string): string[] {
    const out: string[] = [];
    for (const part of this.parts.values())
      for (const uid of part.index.workloadsOnNode(node)) {
        const f = this.facts.get(uid);
        if (f && this.visible(uid, f)) out.push(uid);
      }
    return out;
  }

  // ---- clusters ----

  private addCluster(cluster: MeshCluster): ClusterPart {
    const local = cluster.id === this.localId;
    const localStore: ObjectStore | undefined = local ? cluster.store : this.parts.get(this.localId)?.cluster.store;
    const feed = local || !localStore ? undefined : new RemoteFeed(cluster.store, localStore, this.options.mesh);
    const o = this.options;
    const index = new AmbientIndex({
      store: feed ? feed.store : cluster.store,
      mesh: o.mesh,
      clusterId: cluster.id,
      domain: o.domain,
      ...(o.systemNamespace !== undefined ? { systemNamespace: o.systemNamespace } : {}),
      ...(o.revision !== undefined ? { revision: o.revision } : {}),
      ...(o.enableDryRun ? { enableDryRun: true } : {}),
      ...(o.features ? { features: o.features } : {}),
      networkGateways: this.gateways,
      remote: !local,
      observer: this.observerFor(cluster.id),
    });
    const part: ClusterPart = {
      cluster,
      index,
      ...(feed ? { feed } : {}),
      unsubscribe: index.subscribe((changes) => this.onIndexChanges(cluster.id, changes)),
    };
    this.parts.set(cluster.id, part);
    return part;
  }

  private closePart(part: ClusterPart): void {
    part.unsubscribe();
    part.index.close();
    part.feed?.close();
  }

  private onCluster(e: ClusterEvent): void {
    if (e.cluster.id === this.localId) return;
    const old = this.parts.get(e.cluster.id);
    if (e.type === 'removed') {
      if (!old) return;
      this.parts.delete(e.cluster.id);
      this.closePart(old);
      for (const uid of this.clusterWorkloads(e.cluster.id)) this.forgetWorkload(uid);
      for (const name of this.clusterServices(e.cluster.id)) this.setClusterService(e.cluster.id, name, undefined);
      this.gateways.dropCluster(e.cluster.id);
      log.info({ cluster: e.cluster.id }, 'remote cluster removed: its workloads and services leave the mesh');
      this.flush([]);
      return;
    }
    // A new cluster, or a replacement (changed kubeconfig): the new index derives everything, and
    // whatever the previous one derived that the new one did not is removed, in the same push. What
    // the previous index served is kept by version, so a replacement that derives the same (a
    // rotated token, a relist) pushes nothing.
    const served = new Map<string, string>();
    if (old) {
      for (const r of old.index.all(ADDRESS_TYPE_URL)) {
        const f = this.facts.get(r.name);
        if (f && this.visible(r.name, f)) served.set(r.name, r.version);
      }
      this.parts.delete(e.cluster.id);
      this.closePart(old);
    }
    const before = this.clusterWorkloads(e.cluster.id);
    const beforeServices = this.clusterServices(e.cluster.id);
    const part = this.addCluster(e.cluster);
    const kept = new Set<string>();
    for (const r of part.index.all(ADDRESS_TYPE_URL)) {
      kept.add(r.name);
      const f = this.facts.get(r.name);
      if (f && this.visible(r.name, f) && served.get(r.name) !== r.version) this.pendingUpdated.add(r.name);
    }
    for (const uid of before) if (!kept.has(uid)) this.forgetWorkload(uid);
    for (const name of beforeServices) {
      if (!part.index.get(ADDRESS_TYPE_URL, name)) this.setClusterService(e.cluster.id, name, undefined);
      this.dirtyServices.add(name);
    }
    log.info({ cluster: e.cluster.id, type: e.type }, 'remote cluster joined the mesh index');
    this.flush([]);
  }

  private clusterWorkloads(clusterId: string): string[] {
    const out: string[] = [];
    for (const [uid, f] of this.facts) if (f.clusterId === clusterId) out.push(uid);
    return out;
  }

  private clusterServices(clusterId: string): string[] {
    const out: string[] = [];
    for (const [name, byCluster] of this.services) if (byCluster.has(clusterId)) out.push(name);
    return out;
  }

  /** Files or drops what one cluster derived for a service name, and marks the name for merging. */
  private setClusterService(clusterId: string, name: string, s: Service | undefined): void {
    let byCluster = this.services.get(name);
    if (s) {
      if (!byCluster) this.services.set(name, (byCluster = new Map<string, Service>()));
      byCluster.set(clusterId, s);
    } else if (byCluster) {
      byCluster.delete(clusterId);
      if (byCluster.size === 0) this.services.delete(name);
    }
    this.dirtyServices.add(name);
  }

  private forgetWorkload(uid: string): void {
    const f = this.facts.get(uid);
    if (!f) return;
    if (this.visible(uid, f)) this.pendingRemoved.add(uid);
    this.pendingUpdated.delete(uid);
    this.fileMembers(uid, f, false);
    this.facts.delete(uid);
  }

  // ---- what the cluster indexes derive ----

  private observerFor(clusterId: string): AddressObserver {
    return {
      workload: (uid, w) => this.observeWorkload(clusterId, uid, w),
      service: (name, s) => this.setClusterService(clusterId, name, s),
    };
  }

  private observeWorkload(clusterId: string, uid: string, w: Workload | undefined): void {
    const old = this.facts.get(uid);
    if (old && old.clusterId !== clusterId && w) {
      // istiod's rule for one uid from two clusters: the config cluster's wins.
      if (old.clusterId === this.localId) return;
    }
    if (old) {
      if (!w && old.clusterId !== clusterId) return;
      this.fileMembers(uid, old, false);
    }
    if (!w) {
      if (old && this.visible(uid, old)) this.pendingRemoved.add(uid);
      this.facts.delete(uid);
      return;
    }
    const f: WorkloadFacts = {
      clusterId,
      network: w.network ?? '',
      services: Object.keys(w.services ?? {}),
      capacity: w.capacity?.value ?? 0,
      namespace: w.namespace ?? '',
      serviceAccount: w.serviceAccount ?? '',
    };
    this.facts.set(uid, f);
    this.fileMembers(uid, f, true);
    if (old && this.visible(uid, old) && !this.visible(uid, f)) this.pendingRemoved.add(uid);
  }

  /** A workload off the local network is a member of its services' split-horizon workloads. */
  private fileMembers(uid: string, f: WorkloadFacts, add: boolean): void {
    if (this.visible(uid, f)) return;
    for (const svc of f.services) {
      const key = `${f.network};${svc}`;
      let set = this.remoteMembers.get(key);
      if (add) {
        if (!set) this.remoteMembers.set(key, (set = new Set()));
        set.add(uid);
      } else if (set) {
        set.delete(uid);
        if (set.size === 0) this.remoteMembers.delete(key);
      }
      this.dirtyServices.add(svc);
    }
  }

  private visible(uid: string, f: WorkloadFacts): boolean {
    return f.network === this.localNetwork || uid.startsWith(NETWORK_GATEWAY_PREFIX);
  }

  private onIndexChanges(clusterId: string, changes: readonly ChangeSet[]): void {
    const forwarded: ChangeSet[] = [];
    for (const c of changes) {
      if (c.typeUrl === AUTHORIZATION_TYPE_URL) {
        if (clusterId === this.localId) forwarded.push(c);
        continue;
      }
      for (const name of c.updated) {
        const f = this.facts.get(name);
        if (f?.clusterId !== clusterId) continue;
        if (this.visible(name, f)) this.pendingUpdated.add(name);
      }
      // Removals of visible workloads were noted as the index removed them (observeWorkload).
    }
    this.flush(forwarded);
  }

  // ---- merged services and split-horizon workloads ----

  private scopeOf(clusterId: string, name: string, s: Service): MergeScope {
    const part = this.parts.get(clusterId);
    if (!part) return 'LOCAL';
    const store = part.feed ? part.feed.store : part.cluster.store;
    const slash = name.indexOf('/');
    const ns = name.slice(0, slash);
    const svc = kubeServiceOf(store, ns, s.hostname, this.options.domain);
    if (!svc) return 'ENTRY';
    // A remote feed holds only GLOBAL Services.
    if (part.feed) return 'GLOBAL';
    return serviceScope(scopeConfigsOf(this.options.mesh.current()), svc, store.get('Namespace', undefined, ns));
  }

  private recomputeAllServices(): void {
    for (const name of this.services.keys()) this.dirtyServices.add(name);
    for (const key of this.remoteMembers.keys()) this.dirtyServices.add(key.slice(key.indexOf(';') + 1));
    for (const name of this.splitBySource.keys()) this.dirtyServices.add(name);
  }

  private recomputeService(name: string): void {
    const byCluster = this.services.get(name);
    const entries: ClusterService[] = [];
    for (const [clusterId, service] of byCluster ?? [])
      entries.push({ clusterId, service, scope: this.scopeOf(clusterId, name, service) });
    const merged = mergeServices(entries, this.localId);
    const identities = new Set<string>();
    const split: Workload[] = [];
    if (merged?.scope === 'GLOBAL') {
      const trustDomain = this.local.settings.trustDomain;
      for (const network of this.networksOf(name)) {
        const members = this.remoteMembers.get(`${network};${name}`);
        if (!members?.size) continue;
        let capacity = 0;
        for (const uid of members) {
          const f = this.facts.get(uid);
          if (!f) continue;
          capacity += f.capacity || 1;
          identities.add(spiffeId(trustDomain, f.namespace, f.serviceAccount));
        }
        const [gateway, ...others] = this.gateways.forNetwork(network);
        if (!gateway) {
          log.warn({ network, service: name }, 'no network gateway for this network: its workloads are unreachable');
          continue;
        }
        if (others.length)
          log.warn({ network, gateway: gateway.source }, 'several gateways for this network: the first is used');
        split.push(
          splitHorizonWorkload(name, merged.service, gateway, capacity, workloadTrustDomain(this.local.settings)),
        );
      }
    }
    this.merged.setService(name, merged ? withRemoteNetworkSans(merged, identities) : undefined);
    const previous = this.splitBySource.get(name) ?? [];
    for (const w of split) this.merged.setWorkload(w.uid, w);
    const now = new Set(split.map((w) => w.uid));
    for (const uid of previous) if (!now.has(uid)) this.merged.setWorkload(uid, undefined);
    if (now.size) this.splitBySource.set(name, [...now]);
    else this.splitBySource.delete(name);
  }

  /** Networks other than the local one holding workloads of `service`. */
  private networksOf(service: string): string[] {
    const out: string[] = [];
    for (const key of this.remoteMembers.keys()) {
      const semi = key.indexOf(';');
      if (key.slice(semi + 1) === service) out.push(key.slice(0, semi));
    }
    return out.sort();
  }

  private applyDirtyServices(): void {
    for (const name of this.dirtyServices) this.recomputeService(name);
    this.dirtyServices.clear();
  }

  /** Ends a batch: applies what it made dirty and tells the listeners once. */
  private flush(forwarded: ChangeSet[]): void {
    const network = this.parts.has(this.localId) ? this.local.settings.network : this.localNetwork;
    if (network !== this.localNetwork) this.changeLocalNetwork(network);
    this.applyDirtyServices();
    const own = this.merged.resources.takeChanges();
    const updated = [...own.updated, ...this.pendingUpdated];
    const removed = [...own.removed, ...[...this.pendingRemoved].filter((n) => !this.pendingUpdated.has(n))];
    this.pendingUpdated.clear();
    this.pendingRemoved.clear();
    const changes: ChangeSet[] = [];
    if (updated.length || removed.length) changes.push({ typeUrl: ADDRESS_TYPE_URL, updated, removed });
    changes.push(...forwarded);
    if (changes.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(changes);
      } catch (err) {
        log.error({ err }, 'mesh index listener failed');
      }
    }
  }

  /** The config cluster's network label changed: every workload's visibility is decided again. */
  private changeLocalNetwork(network: string): void {
    const wasVisible = new Set<string>();
    for (const [uid, f] of this.facts) if (this.visible(uid, f)) wasVisible.add(uid);
    for (const [uid, f] of this.facts) this.fileMembers(uid, f, false);
    this.localNetwork = network;
    for (const [uid, f] of this.facts) {
      this.fileMembers(uid, f, true);
      const now = this.visible(uid, f);
      if (now && !wasVisible.has(uid)) this.pendingUpdated.add(uid);
      if (!now && wasVisible.has(uid)) this.pendingRemoved.add(uid);
    }
    this.recomputeAllServices();
  }
}

/** The Kubernetes Service behind a Service resource, when it is one (and not a ServiceEntry's). */
function kubeServiceOf(store: ObjectStore, ns: string, hostname: string, domain: string): KubeObject | undefined {
  const suffix = `.${ns}.svc.${domain}`;
  if (!hostname.endsWith(suffix)) return undefined;
  return store.get('Service', ns, hostname.slice(0, -suffix.length));
}
