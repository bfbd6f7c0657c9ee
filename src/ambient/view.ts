// What a derivation may look up besides the object it derives from. The index implements it over
// the store's indexes (store-view.ts); every lookup is a map access, never a scan of a kind.

import type { KindId } from '../store/kinds';
import type { KubeObject } from '../store/types';
import type { GatewayAddress } from './messages';
import type { AmbientSettings } from './settings';
import type { Waypoint } from './waypoints';

export interface MeshView {
  readonly settings: AmbientSettings;
  get(kind: KindId, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Kubernetes Services of `namespace` whose non-empty selector is a subset of `labels`. */
  servicesSelecting(namespace: string, labels: Record<string, string>): KubeObject[];
  /** ServiceEntries of `namespace` whose non-empty workloadSelector is a subset of `labels`. */
  serviceEntriesSelecting(namespace: string, labels: Record<string, string>): KubeObject[];
  /** EndpointSlices with an endpoint whose targetRef is this Pod. */
  slicesTargetingPod(namespace: string, name: string): Iterable<KubeObject>;
  /** AuthorizationPolicies of `namespace` and of the root namespace with matchLabels that select `labels`. */
  policiesSelecting(namespace: string, labels: Record<string, string>): KubeObject[];
  /** PeerAuthentications of one namespace. */
  peerAuthentications(namespace: string): KubeObject[];
  /** The waypoint built from Gateway `<namespace>/<name>`, if it has addresses. */
  waypoint(namespace: string, name: string): Waypoint | undefined;
  /** Pods of `namespace` labelled gateway.networking.k8s.io/gateway-name=`name`: a waypoint's instances. */
  waypointInstances(namespace: string, name: string): Iterable<KubeObject>;
  /** ServiceEntries listing `host` in spec.hosts. */
  serviceEntriesWithHost(host: string): KubeObject[];
  /** A workload's network_gateway on `network` (network-gateways.ts); undefined when its network has none. */
  networkGateway(network: string): GatewayAddress | undefined;
}
