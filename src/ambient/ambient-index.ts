// The ambient index: derives Workload, Service and Authorization resources from the store and
// keeps them current event by event. It implements the xDS server's ResourceCache: every
// resource carries its encoded bytes and version, computed once and shared by all streams.

import { scopedLogger } from '../log/logger';
import type { MeshConfig, MeshConfigSource } from '../mesh/types';
import type { KubeObject, ObjectStore, StoreEvent } from '../store/types';
import { keyOf } from '../store/types';
import {
  ADDRESS_TYPE_URL,
  AUTHORIZATION_TYPE_URL,
  ChangeSet,
  ResourceCache,
  XdsResource,
  XdsTypeUrl,
} from '../contract/xds-resources';
import { convertAuthorizationPolicy } from './authorization';
import { encodeAuthorization } from './codec';
import { DEFAULT_ROOT_NAMESPACE, DEFAULT_SYSTEM_NAMESPACE, DEFAULT_TRUST_DOMAIN, LABEL } from './constants';
import { AddressTable } from './address-table';
import { DerivedStore } from './derived-store';
import { DirtyContext, DirtySet, expandHostnames, markEvent } from './dirty';
import type { Authorization, Service, Workload } from './messages';
import { convertPeerAuthentication, namespacePolicy, staticStrictPolicy } from './peer-authentication';
import { policyStatusFacts, type PolicyStatusFacts } from './policy-status';
import { kubeServiceHostname, servicesOfHostname } from './services';
import { featureOn, workloadTrustDomain, type AmbientFeatures, type AmbientSettings } from './settings';
import {
  NetworkGatewayTable,
  networkGatewaysOf,
  networkGatewayWorkload,
  type NetworkGatewayChange,
} from './network-gateways';
import { implicitWaypointPolicy } from './waypoint-policies';
import { INDEX, StoreView, registerIndexes } from './store-view';
import { namespaceOf, serviceEntrySpec } from './specs';
import { endpointSliceWorkloads, serviceEntryWorkloads } from './workload-sources';
import { waypointStatusFacts, type WaypointStatusFacts } from './waypoint-status';
import { waypointPolicyFacts, type WaypointPolicyFacts } from './waypoint-policy-status';
import { workloadWaypointFacts, type WorkloadWaypointFacts } from './workload-waypoint-status';
import { podUid, podWorkload, workloadEntryUid, workloadEntryWorkload } from './workloads';

const log = scopedLogger('ambient');

export interface AmbientIndexOptions {
  store: ObjectStore;
  mesh: MeshConfigSource;
  clusterId: string;
  domain: string;
  /** The local network; when absent, the system namespace's topology.istio.io/network label. */
  network?: string;
  /** istiod's own namespace (where the network label is read); default istio-system. */
  systemNamespace?: string;
  /** REVISION: Istio objects labelled istio.io/rev for another revision are ignored. */
  revision?: string;
  /** AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: send dry-run policies with dry_run set. */
  enableDryRun?: boolean;
  /** istiod's switches (settings.ts); those left out have istiod's defaults. */
  features?: Partial<AmbientFeatures>;
  /**
   * The mesh's network gateways, shared by the indexes of every cluster (multicluster); by default
   * a table of this store's own Gateways.
   */
  networkGateways?: NetworkGatewayTable;
  /**
   * A remote cluster's index: its Gateways are read as east-west gateways, it derives no
   * Authorization (the config cluster's index does) and no NetworkGateway workloads.
   */
  remote?: boolean;
  /** Hears every workload and service the index sets, before encoding (the multicluster merge). */
  observer?: AddressObserver;
}

/** Sees the Address resources as the index derives them; `undefined` is a removal. */
export interface AddressObserver {
  workload(uid: string, w: Workload | undefined): void;
  service(name: string, s: Service | undefined): void;
}

/** Counters of the last applied batch, for the bench and the debug page. */
export interface BatchStats {
  events: number;
  recomputed: number;
}

export class AmbientIndex implements ResourceCache {
  private readonly store: ObjectStore;
  private readonly view: StoreView;
  private readonly listeners = new Set<(changes: readonly ChangeSet[]) => void>();
  private readonly addressTable = new AddressTable();
  private readonly addresses = this.addressTable.resources;
  private readonly authorizations = new DerivedStore();
  /** Derived names per source object, for sources that yield several resources. */
  private readonly bySource = new Map<string, string[]>();
  private readonly unsubscribe: (() => void)[] = [];
  lastBatch: BatchStats = { events: 0, recomputed: 0 };

  private readonly gateways: NetworkGatewayTable;
  /** Hears the gateway table; the index's own changes are handled where it makes them, not here. */
  private readonly onGateways = (change: NetworkGatewayChange): void => {
    if (change.addresses) this.rebuild();
    else this.recomputeNetworkGateways();
    this.emit();
  };

  constructor(private readonly options: AmbientIndexOptions) {
    this.store = options.store;
    registerIndexes(this.store);
    this.gateways = options.networkGateways ?? new NetworkGatewayTable(options.clusterId);
    this.view = new StoreView(this.store, this.settingsFrom(options.mesh.current()), this.gateways);
    for (const gw of this.store.list('Gateway')) this.fileGateway(keyOf(gw));
    // Both tables are empty: nothing to sweep and no earlier state to report changes against.
    this.addresses.untracked(() => this.authorizations.untracked(() => this.rebuild(false)));
    this.unsubscribe.push(this.store.subscribe((events) => this.onEvents(events)));
    // Another cluster's gateways changed: a changed network_gateway is in every workload of the
    // mesh; a changed list only in the NetworkGateway workloads (rare events, so no finer rule).
    this.unsubscribe.push(this.gateways.subscribe(this.onGateways));
    this.unsubscribe.push(
      options.mesh.subscribe((mesh) => {
        const next = this.settingsFrom(mesh);
        const prev = this.view.settings;
        const sameVisibility =
          JSON.stringify(next.serviceEntryVisibility) === JSON.stringify(prev.serviceEntryVisibility);
        if (next.trustDomain === prev.trustDomain && next.rootNamespace === prev.rootNamespace && sameVisibility)
          return;
        this.view.settings = next;
        this.rebuild();
        this.emit();
      }),
    );
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** Files one Gateway's network gateways in the shared table; true when a network_gateway changed. */
  private fileGateway(key: string): boolean {
    const [ns, name] = splitKey(key);
    const gw = this.store.get('Gateway', ns, name);
    const { clusterId } = this.options;
    const found = gw ? networkGatewaysOf(gw, clusterId, !this.options.remote) : [];
    return this.gateways.set(clusterId, key, found, this.onGateways)?.addresses ?? false;
  }

  /** The config cluster's index lists every cluster's network gateways as workloads (istiod's NetworkGatewayWorkloads). */
  private recomputeNetworkGateways(): void {
    if (this.options.remote) return;
    const td = workloadTrustDomain(this.view.settings);
    const workloads = this.gateways.all().map((g) => networkGatewayWorkload(g, td));
    this.recomputeMany('networkGateways', workloads);
  }

  get settings(): AmbientSettings {
    return this.view.settings;
  }

  private settingsFrom(mesh: MeshConfig): AmbientSettings {
    const systemNs = this.options.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE;
    return {
      clusterId: this.options.clusterId,
      domain: this.options.domain,
      trustDomain: mesh.trustDomain || DEFAULT_TRUST_DOMAIN,
      rootNamespace: mesh.rootNamespace || DEFAULT_ROOT_NAMESPACE,
      network:
        this.options.network ??
        this.store.get('Namespace', undefined, systemNs)?.metadata.labels?.[LABEL.network] ??
        '',
      ...(this.options.revision !== undefined ? { revision: this.options.revision } : {}),
      ...(this.options.enableDryRun ? { enableDryRun: true } : {}),
      ...(this.options.features ? { features: this.options.features } : {}),
      ...(mesh['serviceEntryVisibility'] ? { serviceEntryVisibility: mesh['serviceEntryVisibility'] } : {}),
    };
  }

  // ---- ResourceCache ----

  get(typeUrl: XdsTypeUrl, name: string): XdsResource | undefined {
    return this.table(typeUrl).entries.get(name);
  }

  all(typeUrl: XdsTypeUrl): Iterable<XdsResource> {
    return this.table(typeUrl).entries.values();
  }

  subscribe(listener: (changes: readonly ChangeSet[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  resolveAddress(key: string): string[] {
    return this.addressTable.resolve(key);
  }

  /**
   * The workloads of the pods the store files under `node`. Only pods set a workload's node, from
   * spec.nodeName, the key of the store's node index, and every store event recomputes its pod's
   * workload before anyone reads this: a pod on the node yields one of them exactly when it has a
   * workload at all.
   */
  workloadsOnNode(node: string): string[] {
    const out: string[] = [];
    const clusterId = this.view.settings.clusterId;
    for (const p of this.store.indexed('Pod', INDEX.node, node)) {
      const uid = podUid(clusterId, namespaceOf(p), p.metadata.name);
      if (this.addresses.entries.has(uid)) out.push(uid);
    }
    return out;
  }

  // ---- status facts (controllers/status) ----

  /** What ztunnel made of an AuthorizationPolicy; undefined when it is absent, another revision's or not ztunnel's. */
  policyStatus(namespace: string, name: string): PolicyStatusFacts | undefined {
    const ap = this.view.get('AuthorizationPolicy', namespace, name);
    const s = this.view.settings;
    return ap ? policyStatusFacts(ap, s.rootNamespace, s.enableDryRun) : undefined;
  }

  /** The waypoint binding of a Service or ServiceEntry; undefined when ztunnel gets no Service from it. */
  waypointStatus(kind: 'Service' | 'ServiceEntry', namespace: string, name: string): WaypointStatusFacts | undefined {
    const o = this.view.get(kind, namespace, name);
    return o ? waypointStatusFacts(kind, o, this.view) : undefined;
  }

  /** Whether an AuthorizationPolicy's targetRefs reach a waypoint; undefined without targetRefs. */
  waypointPolicyStatus(namespace: string, name: string): WaypointPolicyFacts | undefined {
    const ap = this.view.get('AuthorizationPolicy', namespace, name);
    return ap ? waypointPolicyFacts(ap, this.view) : undefined;
  }

  /** The waypoint binding of a WorkloadEntry; undefined when it is absent or another revision's. */
  workloadEntryWaypointStatus(namespace: string, name: string): WorkloadWaypointFacts | undefined {
    const we = this.view.get('WorkloadEntry', namespace, name);
    return we ? workloadWaypointFacts(we, this.view) : undefined;
  }

  private table(typeUrl: XdsTypeUrl): DerivedStore {
    return typeUrl === ADDRESS_TYPE_URL ? this.addresses : this.authorizations;
  }

  // ---- writes ----

  private setWorkload(uid: string, w: Workload | undefined): void {
    this.options.observer?.workload(uid, w);
    this.addressTable.setWorkload(uid, w);
  }

  private setService(name: string, s: Service | undefined): void {
    this.options.observer?.service(name, s);
    this.addressTable.setService(name, s);
  }

  private setAuthorization(name: string, a: Authorization | undefined): void {
    // A remote cluster's policies are the config cluster's: its index would only derive them again.
    if (this.options.remote) return;
    this.authorizations.set(name, a ? encodeAuthorization(a) : undefined);
  }

  /** Replaces the names a multi-resource source yields; the ones it no longer yields are removed. */
  private replaceSource(source: string, names: string[], remove: (name: string) => void): void {
    const previous = this.bySource.get(source) ?? [];
    const keep = new Set(names);
    for (const n of previous) if (!keep.has(n)) remove(n);
    if (names.length) this.bySource.set(source, names);
    else this.bySource.delete(source);
  }

  // ---- recomputation ----

  private recomputePod(key: string): void {
    const [ns, name] = splitKey(key);
    this.setPodWorkload(ns, name, this.store.get('Pod', ns, name));
  }

  private setPodWorkload(ns: string, name: string, pod: KubeObject | undefined): void {
    this.setWorkload(podUid(this.view.settings.clusterId, ns, name), pod ? podWorkload(pod, this.view) : undefined);
  }

  private recomputeWorkloadEntry(key: string): void {
    const [ns, name] = splitKey(key);
    const we = this.view.get('WorkloadEntry', ns, name);
    this.setWorkload(
      workloadEntryUid(this.view.settings.clusterId, ns, name),
      we ? workloadEntryWorkload(we, this.view) : undefined,
    );
  }

  private recomputeMany(source: string, workloads: Workload[]): void {
    for (const w of workloads) this.setWorkload(w.uid, w);
    this.replaceSource(
      source,
      workloads.map((w) => w.uid),
      (uid) => this.setWorkload(uid, undefined),
    );
  }

  private recomputeServiceEntry(key: string): void {
    const [ns, name] = splitKey(key);
    const se = this.view.get('ServiceEntry', ns, name);
    this.recomputeMany(`ServiceEntry:${key}`, se ? serviceEntryWorkloads(se, this.view) : []);
  }

  private recomputeSlice(key: string): void {
    const [ns, name] = splitKey(key);
    const slice = this.store.get('EndpointSlice', ns, name);
    this.recomputeMany(`EndpointSlice:${key}`, slice ? endpointSliceWorkloads(slice, this.view) : []);
  }

  private recomputeHostname(hostname: string): void {
    const services = servicesOfHostname(hostname, this.view);
    for (const [name, s] of services) this.setService(name, s);
    this.replaceSource(`host:${hostname}`, [...services.keys()], (name) => this.setService(name, undefined));
  }

  private recomputePolicy(key: string): void {
    const [ns, name] = splitKey(key);
    const ap = this.view.get('AuthorizationPolicy', ns, name);
    this.setAuthorization(
      key,
      ap
        ? convertAuthorizationPolicy(ap, this.view.settings.rootNamespace, this.view.settings.enableDryRun)
        : undefined,
    );
  }

  /** PILOT_AUTO_ALLOW_WAYPOINT_POLICY: the implicit policy of the Gateway `key`, when it is a waypoint with pods. */
  private recomputeWaypointPolicy(key: string): void {
    const [ns, name] = splitKey(key);
    const wp = featureOn(this.view.settings, 'autoAllowWaypointPolicy') ? this.view.waypoint(ns, name) : undefined;
    const policy = wp ? implicitWaypointPolicy(wp, this.view) : undefined;
    if (policy) this.setAuthorization(`${policy.namespace}/${policy.name}`, policy);
    this.replaceSource(`waypoint:${key}`, policy ? [`${policy.namespace}/${policy.name}`] : [], (n) =>
      this.setAuthorization(n, undefined),
    );
  }

  /** PA-derived policies are few; any PeerAuthentication event recomputes all of them. */
  private recomputePeerAuthentications(): void {
    const root = this.view.settings.rootNamespace;
    const all = this.view.list('PeerAuthentication');
    const derived: Authorization[] = [];
    if (all.length > 0) derived.push(staticStrictPolicy(root));
    const rootPolicy = namespacePolicy(this.view.list('PeerAuthentication', root));
    for (const pa of all) {
      const nsPolicy = namespacePolicy(this.view.list('PeerAuthentication', pa.metadata.namespace));
      const converted = convertPeerAuthentication(pa, nsPolicy, rootPolicy, root);
      if (converted) derived.push(converted);
    }
    for (const a of derived) this.setAuthorization(`${a.namespace}/${a.name}`, a);
    this.replaceSource(
      'peerAuthentications',
      derived.map((a) => `${a.namespace}/${a.name}`),
      (n) => this.setAuthorization(n, undefined),
    );
  }

  private apply(d: DirtySet): number {
    if (d.all) return this.rebuild();
    for (const k of d.pods) this.recomputePod(k);
    for (const k of d.workloadEntries) this.recomputeWorkloadEntry(k);
    for (const k of d.serviceEntries) this.recomputeServiceEntry(k);
    for (const k of d.slices) this.recomputeSlice(k);
    for (const h of d.hostnames) this.recomputeHostname(h);
    for (const k of d.policies) this.recomputePolicy(k);
    for (const k of d.waypoints) this.recomputeWaypointPolicy(k);
    if (d.peerAuthentications) this.recomputePeerAuthentications();
    return (
      d.pods.size +
      d.workloadEntries.size +
      d.serviceEntries.size +
      d.slices.size +
      d.hostnames.size +
      d.policies.size +
      d.waypoints.size +
      (d.peerAuthentications ? 1 : 0)
    );
  }

  /**
   * Recomputes every resource from the store; with `sweep`, names that are no longer derived are
   * removed (the first build has none).
   */
  private rebuild(sweep = true): number {
    const s = this.view.settings;
    const d = new DirtySet();
    // Pods straight from the list, not by key: a key per pod would be made, split and looked up
    // again.
    const pods = this.store.list('Pod');
    if (sweep) {
      this.addresses.beginSweep();
      this.authorizations.beginSweep();
    }
    this.bySource.clear();
    for (const p of pods) this.setPodWorkload(namespaceOf(p), p.metadata.name, p);
    for (const w of this.store.list('WorkloadEntry')) d.workloadEntries.add(keyOf(w));
    for (const se of this.store.list('ServiceEntry')) {
      d.serviceEntries.add(keyOf(se));
      for (const h of serviceEntrySpec(se).hosts ?? []) d.hostnames.add(h);
    }
    for (const slice of this.store.list('EndpointSlice')) d.slices.add(keyOf(slice));
    for (const svc of this.store.list('Service'))
      d.hostnames.add(kubeServiceHostname(svc.metadata.name, namespaceOf(svc), s.domain));
    for (const ap of this.store.list('AuthorizationPolicy')) d.policies.add(keyOf(ap));
    if (featureOn(s, 'autoAllowWaypointPolicy'))
      for (const gw of this.store.list('Gateway')) d.waypoints.add(keyOf(gw));
    d.peerAuthentications = true;
    this.recomputeNetworkGateways();
    const count = this.apply(d) + pods.length;
    if (sweep) {
      this.addresses.endSweep();
      this.authorizations.endSweep();
    }
    return count;
  }

  private onEvents(events: readonly StoreEvent[]): void {
    const d = new DirtySet();
    const s = this.view.settings;
    const ctx: DirtyContext = {
      store: this.store,
      domain: s.domain,
      rootNamespace: s.rootNamespace,
      autoAllowWaypointPolicy: featureOn(s, 'autoAllowWaypointPolicy'),
    };
    if (this.options.network === undefined)
      ctx.networkNamespace = this.options.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE;
    let sawGateway = false;
    let gatewaysChanged = false;
    for (const e of events) {
      markEvent(ctx, d, e);
      if (e.kind !== 'Gateway') continue;
      sawGateway = true;
      gatewaysChanged = this.fileGateway(keyOf(e.object)) || gatewaysChanged;
    }
    // A changed network_gateway is in every workload on its network: rare, so everything is derived again.
    if (gatewaysChanged) d.all = true;
    expandHostnames(ctx, d);
    if (d.all) this.view.settings = this.settingsFrom(this.options.mesh.current());
    const recomputed = this.apply(d);
    if (!d.all && sawGateway) this.recomputeNetworkGateways();
    this.lastBatch = { events: events.length, recomputed };
    this.emit();
  }

  private emit(): void {
    const changes: ChangeSet[] = [];
    const a = this.addresses.takeChanges();
    if (a.updated.length || a.removed.length) changes.push({ typeUrl: ADDRESS_TYPE_URL, ...a });
    const z = this.authorizations.takeChanges();
    if (z.updated.length || z.removed.length) changes.push({ typeUrl: AUTHORIZATION_TYPE_URL, ...z });
    if (changes.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(changes);
      } catch (err) {
        log.error({ err }, 'ambient index listener failed');
      }
    }
  }
}

function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
