// After any random sequence of store events, the incremental index equals a from-scratch rebuild
// byte for byte, and each change set is exactly the difference between consecutive states.

import { AmbientIndex } from '../../../src/ambient/ambient-index';
import type { KindId } from '../../../src/store/kinds';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import {
  ADDRESS_TYPE_URL,
  AUTHORIZATION_TYPE_URL,
  ChangeSet,
  XDS_TYPE_ORDER,
} from '../../../src/contract/xds-resources';
import {
  authz,
  endpointSlice,
  gateway,
  meshSource,
  namespace,
  node,
  peerAuthn,
  pod,
  service,
  serviceEntry,
  workloadEntry,
  Obj,
} from '../../support/ambient/fixtures';

const EVENTS = 1000;
const SEED = 20240611;

/** mulberry32: small, seeded, good enough to explore the space reproducibly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMESPACES = ['ns0', 'ns1', 'ns2', 'istio-system'];
const REVISION = 'default';
const COUNTS: Record<string, number> = {
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

function generator(rand: () => number) {
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
        labels: maybe(0.7) ? { 'istio.io/waypoint-for': pick(['service', 'workload', 'all', 'none']) } : {},
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

const REVISIONED = new Set(['AuthorizationPolicy', 'PeerAuthentication', 'ServiceEntry', 'WorkloadEntry']);

function snapshot(index: AmbientIndex): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of XDS_TYPE_ORDER)
    for (const r of index.all(t)) out.set(`${t} ${r.name}`, Buffer.from(r.bytes).toString('hex'));
  return out;
}

function diff(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) out.push(`updated ${k}`);
  for (const k of before.keys()) if (!after.has(k)) out.push(`removed ${k}`);
  return out.sort();
}

function flatten(changes: readonly ChangeSet[]): string[] {
  const out: string[] = [];
  for (const c of changes) {
    for (const n of c.updated) out.push(`updated ${c.typeUrl} ${n}`);
    for (const n of c.removed) out.push(`removed ${c.typeUrl} ${n}`);
  }
  return out.sort();
}

describe('incremental ambient index (property)', () => {
  it(`equals a from-scratch rebuild after each of ${EVENTS} random events, and change sets are exactly the difference`, () => {
    const rand = prng(SEED);
    const { pick, maybe, make } = generator(rand);
    const store = new MemoryStore();
    // Start from a populated mesh so updates and deletes dominate.
    const initial: { kind: KindId; object: KubeObject }[] = [];
    for (const [kind, n] of Object.entries(COUNTS))
      for (let i = 0; i < n; i++) if (maybe(0.7)) initial.push(make[kind]!(i));
    store.apply(initial);
    const mesh = meshSource();
    const index = new AmbientIndex({
      store,
      mesh,
      clusterId: 'Kubernetes',
      domain: 'cluster.local',
      revision: REVISION,
    });
    let emitted: ChangeSet[] = [];
    index.subscribe((c) => emitted.push(...c));
    let before = snapshot(index);
    let events = 0;
    let nonEmptyBatches = 0;
    while (events < EVENTS) {
      const batch: { kind: KindId; object: KubeObject; deleted?: boolean }[] = [];
      const size = 1 + Math.floor(rand() * 3);
      for (let j = 0; j < size; j++, events++) {
        const kind = pick(Object.keys(COUNTS)) as KindId;
        const o = make[kind]!(Math.floor(rand() * COUNTS[kind]!));
        if (REVISIONED.has(kind) && maybe(0.1))
          o.object.metadata.labels = { ...o.object.metadata.labels, 'istio.io/rev': pick(['default', 'canary']) };
        if (kind === 'AuthorizationPolicy' && maybe(0.1))
          o.object.metadata.annotations = { 'istio.io/dry-run': 'true' };
        const exists = store.get(o.kind, o.object.metadata.namespace, o.object.metadata.name) !== undefined;
        batch.push({ kind: o.kind, object: o.object, ...(exists && maybe(0.35) ? { deleted: true } : {}) });
      }
      if (maybe(0.02)) {
        // A meshConfig change is its own push; the batch after it is checked on its own.
        const visibility = pick([undefined, 'NAMESPACE', 'NONE']);
        mesh.set({
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
        });
        before = snapshot(index);
      }
      emitted = [];
      store.apply(batch);
      const after = snapshot(index);
      const fresh = new AmbientIndex({
        store,
        mesh,
        clusterId: 'Kubernetes',
        domain: 'cluster.local',
        revision: REVISION,
      });
      const rebuilt = snapshot(fresh);
      fresh.close();
      expect(diff(rebuilt, after)).toEqual([]);
      expect(flatten(emitted)).toEqual(diff(before, after));
      expect(new Set(emitted.map((c) => c.typeUrl)).size).toBe(emitted.length === 0 ? 0 : emitted.length);
      if (emitted.length) nonEmptyBatches++;
      before = after;
    }
    expect(nonEmptyBatches).toBeGreaterThan(EVENTS / 10);
    expect([...index.all(ADDRESS_TYPE_URL)].length).toBeGreaterThan(0);
    expect([...index.all(AUTHORIZATION_TYPE_URL)].length).toBeGreaterThan(0);
    index.close();
  });
});
