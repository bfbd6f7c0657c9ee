// MeshView over the object store: the indexes the derivations and the dependency tracking use,
// registered once, so that no event ever scans a whole kind.

import type { KindId } from '../store/kinds';
import { matchLabels } from '../store/selector';
import type { KubeObject, LabelFiling, LabelIndexView, ObjectStore } from '../store/types';
import { LABEL } from './constants';
import { AmbientSettings, inRevision } from './settings';
import { authorizationPolicySpec, gatewaySpec, podSpec, serviceEntrySpec, serviceSpec, sliceEndpoints } from './specs';

/** The Istio kinds istiod filters by istio.io/rev. */
const REVISIONED: ReadonlySet<KindId> = new Set<KindId>([
  'AuthorizationPolicy',
  'PeerAuthentication',
  'ServiceEntry',
  'WorkloadEntry',
]);
import type { MeshView } from './view';
import type { GatewayAddress } from './messages';
import { NetworkGatewayTable } from './network-gateways';
import { Waypoint, canaryRefFromLabels, waypointFromGateway, waypointRefFromLabels } from './waypoints';
import { workloadEntryLabels } from './workloads';

export const INDEX = {
  labels: 'ambient.labels',
  selector: 'ambient.selector',
  node: 'ambient.node',
  targetPod: 'ambient.targetPod',
  sliceService: 'ambient.sliceService',
  host: 'ambient.host',
  waypointRef: 'ambient.waypointRef',
  gatewayName: 'ambient.gatewayName',
  gatewayClass: 'ambient.gatewayClass',
} as const;

const ns = (o: KubeObject) => o.metadata.namespace ?? '';

/** Filed by its own labels in its namespace (Pods, WorkloadEntries). */
const byOwnLabels =
  (labelsOf: (o: KubeObject) => Record<string, string> | undefined) =>
  (o: KubeObject): LabelFiling => ({ scope: ns(o), labels: labelsOf(o) });

/** Keys under which an object's own waypoint binding is filed: `<wp ns>/<wp name>`. */
function waypointRefKeys(labels: Record<string, string> | undefined, namespace: string): string[] {
  const ref = waypointRefFromLabels(labels, namespace);
  const canary = canaryRefFromLabels(labels, namespace);
  const keys = ref ? [`${ref.namespace}/${ref.name}`] : [];
  if (canary) keys.push(`${canary.namespace}/${canary.name}`);
  return keys;
}

/** Registers the indexes once per store; a second index over the same store reuses them. */
export function registerIndexes(store: ObjectStore): void {
  try {
    store.labelIndex('Pod', INDEX.labels);
    return;
  } catch {
    // Not registered yet.
  }
  store.addLabelIndex(
    'Pod',
    INDEX.labels,
    byOwnLabels((o) => o.metadata.labels),
  );
  store.addIndex('Pod', INDEX.node, (o) => {
    const node = podSpec(o).nodeName;
    return node ? [node] : [];
  });
  store.addIndex('Pod', INDEX.waypointRef, (o) => waypointRefKeys(o.metadata.labels, ns(o)));
  store.addIndex('Pod', INDEX.gatewayName, (o) =>
    o.metadata.labels?.[LABEL.gatewayName] ? [`${ns(o)}/${o.metadata.labels[LABEL.gatewayName]}`] : [],
  );
  store.addLabelIndex('WorkloadEntry', INDEX.labels, byOwnLabels(workloadEntryLabels));
  store.addIndex('WorkloadEntry', INDEX.waypointRef, (o) => waypointRefKeys(workloadEntryLabels(o), ns(o)));
  store.addIndex('WorkloadEntry', INDEX.gatewayName, (o) => {
    const gw = workloadEntryLabels(o)[LABEL.gatewayName];
    return gw ? [`${ns(o)}/${gw}`] : [];
  });
  store.addLabelIndex('Service', INDEX.selector, (o) => ({ scope: ns(o), labels: serviceSpec(o).selector }));
  store.addIndex('Service', INDEX.waypointRef, (o) => waypointRefKeys(o.metadata.labels, ns(o)));
  store.addLabelIndex('ServiceEntry', INDEX.selector, (o) => ({
    scope: ns(o),
    labels: serviceEntrySpec(o).workloadSelector?.labels,
  }));
  store.addIndex('ServiceEntry', INDEX.host, (o) => [...new Set(serviceEntrySpec(o).hosts ?? [])]);
  store.addIndex('ServiceEntry', INDEX.waypointRef, (o) => [
    ...new Set([
      ...waypointRefKeys(o.metadata.labels, ns(o)),
      ...(serviceEntrySpec(o).endpoints ?? []).flatMap((e) => [
        ...waypointRefKeys(e.labels, ns(o)),
        ...(e.labels?.[LABEL.gatewayName] ? [`${ns(o)}/${e.labels[LABEL.gatewayName]}`] : []),
      ]),
    ]),
  ]);
  store.addIndex('Namespace', INDEX.waypointRef, (o) => waypointRefKeys(o.metadata.labels, o.metadata.name));
  store.addIndex('EndpointSlice', INDEX.targetPod, (o) => [
    ...new Set(
      sliceEndpoints(o).flatMap(({ targetRef: ref }) =>
        ref?.kind === 'Pod' && ref.name ? [`${ref.namespace ?? ns(o)}/${ref.name}`] : [],
      ),
    ),
  ]);
  store.addIndex('EndpointSlice', INDEX.sliceService, (o) =>
    o.metadata.labels?.[LABEL.serviceName] ? [`${ns(o)}/${o.metadata.labels[LABEL.serviceName]}`] : [],
  );
  // Only policies with a selector are filed; an empty matchLabels selects the whole namespace.
  store.addLabelIndex('AuthorizationPolicy', INDEX.selector, (o) => {
    const ml = authorizationPolicySpec(o).selector?.matchLabels;
    if (ml === undefined || ml === null) return undefined;
    return Object.keys(ml).length ? { scope: ns(o), labels: ml } : { scope: ns(o), all: true };
  });
  store.addIndex('Gateway', INDEX.gatewayClass, (o) => {
    const cls = gatewaySpec(o).gatewayClassName;
    return cls ? [cls] : [];
  });
}

/**
 * Objects of `kind` whose selector holds a pair of `labels` (and, with `all`, those selecting the
 * whole namespace), de-duplicated. Runs several times per pod in a build and most pairs find
 * nothing, so it de-duplicates only when two lookups both found something.
 */
function candidates(
  index: LabelIndexView,
  namespace: string,
  labels: Record<string, string>,
  all = false,
): KubeObject[] {
  const out: KubeObject[] = [];
  // Most namespaces hold no ServiceEntry and the root namespace few policies: one lookup ends it.
  if (!index.hasScope(namespace)) return out;
  let lookupsWithHits = 0;
  if (all) lookupsWithHits += take(out, index.selectingAll(namespace));
  for (const k in labels) lookupsWithHits += take(out, index.withLabel(namespace, k, labels[k] ?? ''));
  return lookupsWithHits > 1 ? [...new Set(out)] : out;
}

/** Appends `found` to `out`; 1 when it found something. A function, not a closure made per call. */
function take(out: KubeObject[], found: Iterable<KubeObject>): number {
  const before = out.length;
  for (const o of found) out.push(o);
  return out.length > before ? 1 : 0;
}

export class StoreView implements MeshView {
  /** The selector indexes, looked up at first use (a store never drops a registered index). */
  private serviceSelectors: LabelIndexView | undefined;
  private entrySelectors: LabelIndexView | undefined;
  private policySelectors: LabelIndexView | undefined;

  constructor(
    private readonly store: ObjectStore,
    public settings: AmbientSettings,
    private readonly gateways: NetworkGatewayTable = new NetworkGatewayTable(settings.clusterId),
  ) {}

  networkGateway(network: string): GatewayAddress | undefined {
    return this.gateways.addressFor(network);
  }

  get(kind: KindId, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.store.get(kind, namespace, name);
    return REVISIONED.has(kind) && o && !inRevision(o.metadata.labels, this.settings.revision) ? undefined : o;
  }

  /** store.list of one kind, without objects of another revision. */
  list(kind: KindId, namespace?: string): KubeObject[] {
    const all = this.store.list(kind, namespace);
    return REVISIONED.has(kind) ? all.filter((o) => inRevision(o.metadata.labels, this.settings.revision)) : all;
  }

  servicesSelecting(namespace: string, labels: Record<string, string>): KubeObject[] {
    return candidates(
      (this.serviceSelectors ??= this.store.labelIndex('Service', INDEX.selector)),
      namespace,
      labels,
    ).filter((s) => matchLabels(labels, serviceSpec(s).selector));
  }

  serviceEntriesSelecting(namespace: string, labels: Record<string, string>): KubeObject[] {
    return candidates(
      (this.entrySelectors ??= this.store.labelIndex('ServiceEntry', INDEX.selector)),
      namespace,
      labels,
    ).filter((s) => this.inRev(s) && matchLabels(labels, serviceEntrySpec(s).workloadSelector?.labels));
  }

  slicesTargetingPod(namespace: string, name: string): Iterable<KubeObject> {
    return this.store.indexed('EndpointSlice', INDEX.targetPod, `${namespace}/${name}`);
  }

  policiesSelecting(namespace: string, labels: Record<string, string>): KubeObject[] {
    const root = this.settings.rootNamespace;
    const index = (this.policySelectors ??= this.store.labelIndex('AuthorizationPolicy', INDEX.selector));
    const out = candidates(index, namespace, labels, true);
    if (root !== namespace) out.push(...candidates(index, root, labels, true));
    // Only policies with a selector are filed under the selector index.
    return out.filter(
      (p) => this.inRev(p) && matchLabels(labels, authorizationPolicySpec(p).selector?.matchLabels ?? undefined),
    );
  }

  peerAuthentications(namespace: string): KubeObject[] {
    return this.list('PeerAuthentication', namespace);
  }

  waypoint(namespace: string, name: string): Waypoint | undefined {
    const gw = this.store.get('Gateway', namespace, name);
    if (!gw) return undefined;
    const className = gatewaySpec(gw).gatewayClassName;
    const cls = className ? this.store.get('GatewayClass', undefined, className) : undefined;
    return waypointFromGateway(gw, cls, this.settings.network);
  }

  waypointInstances(namespace: string, name: string): Iterable<KubeObject> {
    return this.store.indexed('Pod', INDEX.gatewayName, `${namespace}/${name}`);
  }

  serviceEntriesWithHost(host: string): KubeObject[] {
    return this.store.byIndex('ServiceEntry', INDEX.host, host).filter((s) => this.inRev(s));
  }

  private inRev(o: KubeObject): boolean {
    return inRevision(o.metadata.labels, this.settings.revision);
  }
}
