// Builders of plain Kubernetes/Istio objects and a MeshView over a MemoryStore, for rule tables.

import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { AmbientSettings } from '../../../src/ambient/settings';
import { StoreView, registerIndexes } from '../../../src/ambient/store-view';
import type { MeshConfig, MeshConfigSource } from '../../../src/mesh/types';
import type { KindId } from '../../../src/store/kinds';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

export const SETTINGS: AmbientSettings = {
  clusterId: 'Kubernetes',
  domain: 'cluster.local',
  trustDomain: 'cluster.local',
  rootNamespace: 'istio-system',
  network: '',
};

export interface Obj {
  kind: KindId;
  object: KubeObject;
}

type Meta = Partial<KubeObject['metadata']>;

const obj = (
  kind: KindId,
  name: string,
  namespace: string | undefined,
  meta: Meta,
  rest: Partial<KubeObject>,
): Obj => ({
  kind,
  object: { metadata: { name, ...(namespace !== undefined ? { namespace } : {}), ...meta }, ...rest },
});

export function pod(
  name: string,
  opts: {
    ns?: string;
    ip?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
    meta?: Meta;
  } = {},
): Obj {
  return obj(
    'Pod',
    name,
    opts.ns ?? 'default',
    { labels: opts.labels, annotations: opts.annotations, ...opts.meta },
    {
      spec: {
        serviceAccountName: 'sa',
        nodeName: 'node1',
        containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }],
        ...opts.spec,
      },
      status: {
        phase: 'Running',
        podIP: opts.ip ?? '10.0.0.1',
        conditions: [{ type: 'Ready', status: 'True' }],
        ...opts.status,
      },
    },
  );
}

export function service(
  name: string,
  opts: {
    ns?: string;
    selector?: Record<string, string>;
    ports?: unknown[];
    spec?: Record<string, unknown>;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  } = {},
): Obj {
  return obj(
    'Service',
    name,
    opts.ns ?? 'default',
    { labels: opts.labels, annotations: opts.annotations },
    {
      spec: {
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        selector: opts.selector ?? { app: name },
        ports: opts.ports ?? [{ name: 'http', port: 80, targetPort: 8080 }],
        ...opts.spec,
      },
    },
  );
}

export function namespace(name: string, labels?: Record<string, string>, annotations?: Record<string, string>): Obj {
  return obj('Namespace', name, undefined, { labels, annotations }, {});
}

export function node(name: string, labels?: Record<string, string>): Obj {
  return obj('Node', name, undefined, { labels }, {});
}

export function authz(name: string, ns: string, spec: Record<string, unknown>, meta: Meta = {}): Obj {
  return obj('AuthorizationPolicy', name, ns, meta, { spec });
}

export function peerAuthn(
  name: string,
  ns: string,
  spec: Record<string, unknown>,
  created = '2024-01-01T00:00:00Z',
): Obj {
  return obj('PeerAuthentication', name, ns, { creationTimestamp: created }, { spec });
}

export function gateway(
  name: string,
  ns: string,
  opts: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    addresses?: { type?: string; value: string }[];
    listeners?: unknown[];
    className?: string;
  } = {},
): Obj {
  return obj(
    'Gateway',
    name,
    ns,
    { labels: opts.labels, annotations: opts.annotations },
    {
      spec: {
        gatewayClassName: opts.className ?? 'istio-waypoint',
        listeners: opts.listeners ?? [{ name: 'mesh', port: 15008, protocol: 'HBONE' }],
      },
      status: { addresses: opts.addresses ?? [{ type: 'Hostname', value: `${name}.${ns}.svc.cluster.local` }] },
    },
  );
}

export function serviceEntry(name: string, ns: string, spec: Record<string, unknown>, meta: Meta = {}): Obj {
  return obj('ServiceEntry', name, ns, { creationTimestamp: '2024-01-01T00:00:00Z', ...meta }, { spec });
}

export function workloadEntry(name: string, ns: string, spec: Record<string, unknown>, meta: Meta = {}): Obj {
  return obj('WorkloadEntry', name, ns, meta, { spec });
}

export function endpointSlice(
  name: string,
  ns: string,
  body: Record<string, unknown>,
  labels: Record<string, string>,
): Obj {
  return obj('EndpointSlice', name, ns, { labels }, { addressType: 'IPv4', ...body });
}

export function storeWith(objects: readonly Obj[]): MemoryStore {
  const store = new MemoryStore();
  store.apply(objects.map((o) => ({ kind: o.kind, object: o.object })));
  return store;
}

export function viewOf(objects: readonly Obj[], settings: Partial<AmbientSettings> = {}): StoreView {
  const store = storeWith(objects);
  registerIndexes(store);
  return new StoreView(store, { ...SETTINGS, ...settings });
}

export function meshSource(
  overrides: Partial<MeshConfig> = {},
): MeshConfigSource & { set(m: Partial<MeshConfig>): void } {
  let current: MeshConfig = {
    trustDomain: 'cluster.local',
    trustDomainAliases: [],
    rootNamespace: 'istio-system',
    defaultConfig: {},
    ...overrides,
  };
  const listeners = new Set<(m: MeshConfig, p: MeshConfig) => void>();
  return {
    current: () => current,
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(m) {
      const prev = current;
      current = { ...current, ...m };
      for (const l of listeners) l(current, prev);
    },
  };
}

export function indexOf(store: MemoryStore, mesh = meshSource(), network?: string): AmbientIndex {
  return new AmbientIndex({
    store,
    mesh,
    clusterId: 'Kubernetes',
    domain: 'cluster.local',
    ...(network !== undefined ? { network } : {}),
  });
}
