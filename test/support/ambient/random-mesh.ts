// Random mesh states for property tests: a seeded generator of every kind the ambient index reads,
// and random store batches (upserts, revision and dry-run labels, deletes) over a small name space
// so updates and deletes dominate. Shared by the ambient index property test and the Address
// encoder's differential test.

import type { MeshConfig } from '../../../src/mesh/types';
import type { KindId } from '../../../src/store/kinds';
import type { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import {
  authz,
  endpointSlice,
  gateway,
  namespace,
  node,
  peerAuthn,
  pod,
  service,
  serviceEntry,
  workloadEntry,
  Obj,
} from './fixtures';

/** mulberry32: small, seeded, good enough to explore the space reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const NAMESPACES = ['ns0', 'ns1', 'ns2', 'istio-system'];
export const REVISION = 'default';
export const COUNTS: Record<string, number> = {
  Pod: 120,
  Service: 30,
  ServiceEntry: 12,
  WorkloadEntry: 15,
  EndpointSlice: 10,
  AuthorizationPolicy: 25,
  PeerAuthentication: 12,
  Gateway: 4,
  Namespace: 4,
  Node: 3,
  GatewayClass: 1,
};

export function generator(rand: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const maybe = (p: number) => rand() < p;
  const labels = (): Record<string, string> => {
    const l: Record<string, string> = {};
    if (maybe(0.8)) l.app = pick(['a', 'b', 'c']);
    if (maybe(0.4)) l.version = pick(['v1', 'v2']);
    if (maybe(0.15)) l['istio.io/use-waypoint'] = pick(['gw0', 'gw1', 'none']);
    if (maybe(0.05)) l['istio.io/use-waypoint-namespace'] = pick(NAMESPACES);
    if (maybe(0.05)) l['networking.istio.io/tunnel'] = 'http';
    return l;
  };
  const selector = () =>
    maybe(0.8) ? { app: pick(['a', 'b', 'c']), ...(maybe(0.2) ? { version: pick(['v1', 'v2']) } : {}) } : {};
  const ts = () => `202${Math.floor(rand() * 4)}-01-01T00:00:00Z`;
  const nsOf = (i: number) => NAMESPACES[i % NAMESPACES.length]!;
  const make: Record<string, (i: number) => Obj> = {
    Pod: (i) =>
      pod(`p${i}`, {
        ns: nsOf(i),
        ip: `10.0.${i >> 8}.${i & 255}`,
        labels: {
          ...labels(),
          ...(maybe(0.05) ? { 'gateway.networking.k8s.io/gateway-name': pick(['gw0', 'gw1']) } : {}),
        },
        annotations: maybe(0.5) ? { 'ambient.istio.io/redirection': 'enabled' } : {},
        spec: {
          nodeName: pick(['n0', 'n1', 'n2']),
          serviceAccountName: pick(['sa1', 'sa2']),
          containers: [{ name: 'c', ports: [{ name: pick(['http', 'grpc']), containerPort: pick([8080, 9090]) }] }],
        },
        status: {
          phase: pick(['Running', 'Running', 'Running', 'Pending', 'Failed']),
          conditions: [{ type: 'Ready', status: pick(['True', 'False']) }],
        },
        meta: { uid: `uid-p${i}` },
      }),
    Service: (i) =>
      service(`s${i}`, {
        ns: nsOf(i),
        selector: selector(),
        labels: maybe(0.2)
          ? {
              'istio.io/use-waypoint': pick(['gw0', 'gw1']),
              ...(maybe(0.5) ? { 'istio.io/use-waypoint-canary': pick(['gw0', 'gw1']) } : {}),
            }
          : {},
        annotations: maybe(0.3) ? { 'istio.io/use-waypoint-canary-weight': pick(['5', '50', 'x']) } : {},
        ports: [{ name: pick(['http', 'tcp']), port: 80, targetPort: pick([8080, 'http', 'grpc']) }],
        spec: maybe(0.1) ? { type: 'ExternalName' } : maybe(0.2) ? { internalTrafficPolicy: 'Local' } : {},
      }),
    ServiceEntry: (i) =>
      serviceEntry(
        `se${i}`,
        nsOf(i),
        {
          hosts: [
            pick(['x.example.com', 'y.example.com', `s${i % 5}.${nsOf(i % 5)}.svc.cluster.local`]),
            ...(maybe(0.3) ? ['z.example.com'] : []),
          ],
          ports: [{ number: 443, name: pick(['tls', 'http']), protocol: 'TLS' }],
          resolution: pick(['NONE', 'DNS', 'STATIC']),
          ...(maybe(0.4)
            ? { workloadSelector: { labels: selector() } }
            : { endpoints: maybe(0.7) ? [{ address: `192.168.0.${i}`, labels: labels() }] : [] }),
          ...(maybe(0.2) ? { exportTo: ['.'] } : {}),
        },
        { creationTimestamp: ts(), labels: labels() },
      ),
    WorkloadEntry: (i) =>
      workloadEntry(
        `we${i}`,
        nsOf(i),
        { address: `172.16.0.${i}`, labels: labels(), serviceAccount: 'vm', ports: { http: 8080 } },
        { labels: maybe(0.5) ? labels() : {} },
      ),
    EndpointSlice: (i) =>
      endpointSlice(
        `es${i}`,
        nsOf(i),
        {
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
          endpoints: [
            {
              addresses: [`10.0.0.${i}`],
              targetRef: {
                kind: 'Pod',
                name: `p${i * 4}`,
                namespace: nsOf(i * 4),
                ...(maybe(0.8) ? { uid: `uid-p${i * 4}` } : {}),
              },
            },
            ...(maybe(0.5) ? [{ addresses: [`10.9.0.${i}`], conditions: { ready: maybe(0.5) } }] : []),
          ],
        },
        { 'kubernetes.io/service-name': `s${i}` },
      ),
    AuthorizationPolicy: (i) =>
      authz(`ap${i}`, nsOf(i), {
        ...(maybe(0.6) ? { selector: maybe(0.9) ? { matchLabels: selector() } : {} } : {}),
        action: pick(['ALLOW', 'DENY', 'CUSTOM']),
        rules: [
          {
            from: [{ source: { namespaces: [pick(NAMESPACES)] } }],
            ...(maybe(0.3) ? { to: [{ operation: { methods: ['GET'] } }] } : {}),
          },
        ],
      }),
    PeerAuthentication: (i) =>
      peerAuthn(
        `pa${i}`,
        nsOf(i),
        {
          ...(maybe(0.5) ? { selector: { matchLabels: selector() } } : {}),
          ...(maybe(0.8) ? { mtls: { mode: pick(['STRICT', 'PERMISSIVE', 'DISABLE', 'UNSET']) } } : {}),
          ...(maybe(0.5)
            ? { portLevelMtls: { [String(pick([8080, 9090]))]: { mode: pick(['STRICT', 'PERMISSIVE', 'DISABLE']) } } }
            : {}),
        },
        ts(),
      ),
    Gateway: (i) =>
      gateway(`gw${i % 2}`, nsOf(i), {
        // A network gateway (istio-remote, with a network) fills network_gateway of every workload
        // on its network: the widest fan-out of all.
        ...(maybe(0.25) ? { className: 'istio-remote' } : {}),
        labels: {
          ...(maybe(0.7) ? { 'istio.io/waypoint-for': pick(['service', 'workload', 'all', 'none']) } : {}),
          ...(maybe(0.4) ? { 'topology.istio.io/network': pick(['net1', '']) } : {}),
        },
        addresses: maybe(0.8)
          ? [
              {
                type: pick(['Hostname', 'IPAddress']),
                value: maybe(0.5) ? `gw${i}.x.svc.cluster.local` : `10.200.0.${i}`,
              },
            ]
          : [],
        listeners: [{ port: 15008, protocol: 'HBONE', allowedRoutes: { namespaces: { from: pick(['Same', 'All']) } } }],
      }),
    Namespace: (i) =>
      namespace(
        NAMESPACES[i]!,
        maybe(0.3)
          ? {
              'istio.io/use-waypoint': pick(['gw0', 'gw1', 'none']),
              ...(maybe(0.3) ? { 'istio.io/use-waypoint-canary': pick(['gw0', 'gw1']) } : {}),
              ...(i === 3 && maybe(0.3) ? { 'topology.istio.io/network': 'net1' } : {}),
            }
          : {},
        maybe(0.2) ? { 'networking.istio.io/traffic-distribution': 'PreferClose' } : {},
      ),
    Node: (i) =>
      node(
        `n${i}`,
        maybe(0.7)
          ? { 'topology.kubernetes.io/region': pick(['r1', 'r2']), 'topology.kubernetes.io/zone': pick(['z1', 'z2']) }
          : {},
      ),
    GatewayClass: () => {
      const labels: Record<string, string> = maybe(0.5) ? { 'istio.io/waypoint-for': pick(['service', 'all']) } : {};
      return { kind: 'GatewayClass', object: { metadata: { name: 'istio-waypoint', labels } } };
    },
  };
  return { pick, maybe, make };
}

export const REVISIONED = new Set(['AuthorizationPolicy', 'PeerAuthentication', 'ServiceEntry', 'WorkloadEntry']);

export type RandomMesh = ReturnType<typeof generator>;
export type StoreEvent = { kind: KindId; object: KubeObject; deleted?: boolean };

/** One to three random events; an object that exists is deleted with probability 0.35. */
export function randomBatch(rand: () => number, g: RandomMesh, store: MemoryStore): StoreEvent[] {
  const { pick, maybe, make } = g;
  const batch: StoreEvent[] = [];
  const size = 1 + Math.floor(rand() * 3);
  for (let j = 0; j < size; j++) {
    const kind = pick(Object.keys(COUNTS)) as KindId;
    const o = make[kind]!(Math.floor(rand() * COUNTS[kind]!));
    if (REVISIONED.has(kind) && maybe(0.1))
      o.object.metadata.labels = { ...o.object.metadata.labels, 'istio.io/rev': pick(['default', 'canary']) };
    if (kind === 'AuthorizationPolicy' && maybe(0.1)) o.object.metadata.annotations = { 'istio.io/dry-run': 'true' };
    const exists = store.get(o.kind, o.object.metadata.namespace, o.object.metadata.name) !== undefined;
    batch.push({ kind: o.kind, object: o.object, ...(exists && maybe(0.35) ? { deleted: true } : {}) });
  }
  return batch;
}

/** A meshConfig change: trust domain, root namespace and ServiceEntry visibility. */
export function randomMeshConfig(g: RandomMesh): Partial<MeshConfig> {
  const { pick } = g;
  const visibility = pick([undefined, 'NAMESPACE', 'NONE']);
  return {
    trustDomain: pick(['cluster.local', 'example.org']),
    rootNamespace: pick(['istio-system', 'ns2']),
    serviceEntryVisibility: visibility && {
      policies: [
        {
          visibility,
          matchingRules: [{ namespaceSelector: { matchLabels: { 'istio.io/use-waypoint': 'gw0' } } }],
        },
      ],
    },
  };
}
