// A generated mesh for the real peers: deterministic Kubernetes and Istio manifests that use every
// kind the ambient index derives from (Pods on every node, HBONE and not, Services with numbered and
// named target ports, a waypoint and the workloads bound to it, WorkloadEntries, ServiceEntries with
// inline endpoints, spec addresses and auto-allocated status addresses, a selector-less Service with
// its own EndpointSlice, AuthorizationPolicies of every scope and PeerAuthentications). The same
// folder is read by istiod-ts in local mode, by istiod's fake discovery server (goldens) and, at
// 5,000 workloads and more, by upstream ztunnel's view of us. Nothing here is random at run time:
// the same options give the same bytes, so a golden can name the input it was made from.

export interface MeshOptions {
  /** Roughly how many workloads (pods, WorkloadEntries, endpoints) the mesh holds. */
  workloads: number;
  /** Nodes node-0 … node-(n-1); every app spreads its pods over all of them. */
  nodes: number;
  /** Application namespaces apps-0 … apps-(n-1), all enrolled in ambient. */
  namespaces: number;
}

export const DEFAULT_MESH: MeshOptions = { workloads: 5000, nodes: 3, namespaces: 4 };

/** One manifest: apiVersion, kind, metadata and the rest, as a YAML document holds it. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string } & Record<string, unknown>;
} & Record<string, unknown>;

const CREATED = '2026-01-05T09:00:00Z';
/** Pods an app gets; apps are added until the pod budget is spent. */
const PODS_PER_APP = 6;
/** istiod's default auto-allocation range for ServiceEntry addresses (240.240.0.0/16). */
const ALLOCATED_PREFIX = '240.240';

const meta = (name: string, namespace: string | undefined, extra: Record<string, unknown> = {}) => ({
  name,
  ...(namespace !== undefined ? { namespace } : {}),
  creationTimestamp: CREATED,
  ...extra,
});

/** A stable pod-template-hash for an app's ReplicaSet, from its name (FNV-1a, base 36, 9 chars). */
function templateHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return (h.toString(36) + 'bcdfghjkl').slice(0, 9);
}

const octets = (base: string, i: number) => `${base}.${(i >> 8) & 255}.${i & 255 || 1}`;

export interface PodSpec {
  name: string;
  namespace: string;
  nodeName: string;
  hostIP: string;
  ip: string;
  labels: Record<string, string>;
  sa: string;
  /** The ReplicaSet (or ownerKind) that owns the pod; the pod's name is then generated from it, as kube does. */
  owner?: string;
  ownerKind?: 'ReplicaSet' | 'Job';
  hostNetwork?: boolean;
  /** False: Running but not Ready (ztunnel is told UNHEALTHY). */
  ready?: boolean;
  redirected: boolean;
  ports: { name: string; containerPort: number }[];
}

/** A running, ready pod as the API server holds it once the node agent has (or has not) redirected it. */
export function podManifest(p: PodSpec): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(p.name, p.namespace, {
      labels: p.labels,
      ...(p.redirected ? { annotations: { 'ambient.istio.io/redirection': 'enabled' } } : {}),
      ...(p.owner
        ? {
            generateName: `${p.owner}-`,
            ownerReferences: [
              {
                apiVersion: p.ownerKind === 'Job' ? 'batch/v1' : 'apps/v1',
                kind: p.ownerKind ?? 'ReplicaSet',
                name: p.owner,
                uid: `owner-${p.owner}`,
                controller: true,
              },
            ],
          }
        : {}),
    }),
    spec: {
      nodeName: p.nodeName,
      serviceAccountName: p.sa,
      ...(p.hostNetwork ? { hostNetwork: true } : {}),
      containers: [{ name: 'main', image: 'example/app:1', ports: p.ports.map((x) => ({ ...x, protocol: 'TCP' })) }],
    },
    status: {
      phase: 'Running',
      hostIP: p.hostIP,
      podIP: p.ip,
      podIPs: [{ ip: p.ip }],
      conditions: [
        { type: 'Ready', status: p.ready === false ? 'False' : 'True' },
        { type: 'ContainersReady', status: p.ready === false ? 'False' : 'True' },
        { type: 'PodScheduled', status: 'True' },
      ],
    },
  };
}

export function generateMesh(options: MeshOptions = DEFAULT_MESH): Manifest[] {
  const out: Manifest[] = [];
  const nodes = Array.from({ length: options.nodes }, (_, i) => `node-${i}`);
  const appNamespaces = Array.from({ length: options.namespaces }, (_, i) => `apps-${i}`);
  const podBudget = Math.max(options.workloads - Math.ceil(options.workloads / 10), PODS_PER_APP);
  const weCount = Math.max(2, Math.floor(options.workloads / 20));
  const seEndpoints = Math.max(2, Math.floor(options.workloads / 50));
  const sliceEndpoints = Math.max(2, options.workloads - podBudget - weCount - seEndpoints);

  // --- cluster scope: namespaces and nodes
  const ns = (name: string, labels: Record<string, string>) =>
    out.push({ apiVersion: 'v1', kind: 'Namespace', metadata: meta(name, undefined, { labels }) });
  ns('istio-system', { 'kubernetes.io/metadata.name': 'istio-system' });
  appNamespaces.forEach((name, i) =>
    ns(name, {
      'kubernetes.io/metadata.name': name,
      'istio.io/dataplane-mode': 'ambient',
      // The first namespace sends all its traffic through its waypoint.
      ...(i === 0 ? { 'istio.io/use-waypoint': 'waypoint' } : {}),
    }),
  );
  ns('legacy', { 'kubernetes.io/metadata.name': 'legacy' });
  ns('vms', { 'kubernetes.io/metadata.name': 'vms', 'istio.io/dataplane-mode': 'ambient' });
  ns('external', { 'kubernetes.io/metadata.name': 'external' });
  nodes.forEach((name, i) =>
    out.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: meta(name, undefined, {
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'topology.kubernetes.io/region': 'region-1',
          'topology.kubernetes.io/zone': `zone-${i % 2}`,
        },
      }),
      spec: { podCIDR: `10.${100 + i}.0.0/16`, podCIDRs: [`10.${100 + i}.0.0/16`] },
      status: {
        addresses: [
          { type: 'InternalIP', address: `172.18.0.${i + 2}` },
          { type: 'Hostname', address: name },
        ],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      },
    }),
  );

  // --- pods: a per-node counter hands out 10.(100+node).x.y
  const nextIp = nodes.map(() => 2);
  const pod = (p: Omit<PodSpec, 'ip' | 'hostIP' | 'nodeName'> & { node: number }) =>
    out.push(
      podManifest({
        ...p,
        nodeName: nodes[p.node]!,
        hostIP: `172.18.0.${p.node + 2}`,
        ip: octets(`10.${100 + p.node}`, nextIp[p.node]!++),
      }),
    );
  const service = (
    name: string,
    namespace: string,
    ip: string,
    selector: Record<string, string> | undefined,
    ports: Record<string, unknown>[],
    labels: Record<string, string> = {},
  ) =>
    out.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(name, namespace, { labels: { app: name, ...labels } }),
      spec: {
        type: 'ClusterIP',
        clusterIP: ip,
        clusterIPs: [ip],
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ...(selector ? { selector } : {}),
        ports: ports.map((p) => ({ protocol: 'TCP', ...p })),
      },
    });

  // ztunnel itself, one per node, as its DaemonSet runs it (not redirected, not in a mesh namespace).
  nodes.forEach((_, n) =>
    pod({
      name: `ztunnel-${n}`,
      namespace: 'istio-system',
      node: n,
      labels: { app: 'ztunnel' },
      sa: 'ztunnel',
      redirected: false,
      ports: [{ name: 'metrics', containerPort: 15020 }],
    }),
  );

  /** A Gateway of class istio-waypoint with its Service, as istiod's waypoint deployment makes them. */
  const waypoint = (name: string, namespace: string, waypointFor: string, ip: string, statusPort: boolean) => {
    out.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: meta(name, namespace, { labels: { 'istio.io/waypoint-for': waypointFor } }),
      spec: { gatewayClassName: 'istio-waypoint', listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE' }] },
      status: { addresses: [{ type: 'Hostname', value: `${name}.${namespace}.svc.cluster.local` }] },
    });
    service(
      name,
      namespace,
      ip,
      { 'gateway.networking.k8s.io/gateway-name': name },
      [
        ...(statusPort ? [{ name: 'status-port', port: 15021, targetPort: 15021 }] : []),
        { name: 'mesh', port: 15008, targetPort: 15008, appProtocol: 'all' },
      ],
      { 'gateway.networking.k8s.io/gateway-name': name, 'istio.io/dataplane-mode': 'none' },
    );
  };

  // The waypoint of apps-0: a Gateway of class istio-waypoint, its Service and two pods.
  const wpNs = appNamespaces[0]!;
  waypoint('waypoint', wpNs, 'service', '10.96.0.100', true);
  [0, 1].forEach((i) =>
    pod({
      name: `waypoint-${templateHash('waypoint')}-w${i}`,
      namespace: wpNs,
      node: i % nodes.length,
      labels: { 'gateway.networking.k8s.io/gateway-name': 'waypoint', 'istio.io/dataplane-mode': 'none' },
      sa: 'waypoint',
      owner: `waypoint-${templateHash('waypoint')}`,
      redirected: false,
      ports: [{ name: 'mesh', containerPort: 15008 }],
    }),
  );

  // Apps: Services and pods spread over every node and namespace until the pod budget is spent.
  let pods = 0;
  let app = 0;
  const legacyEvery = 9;
  while (pods < podBudget) {
    const legacy = app % legacyEvery === legacyEvery - 1;
    const namespace = legacy ? 'legacy' : appNamespaces[app % appNamespaces.length]!;
    const name = `app-${app}`;
    const named = app % 7 === 3;
    const twoPorts = app % 5 === 1;
    const svcLabels: Record<string, string> =
      // Bound to apps-0's waypoint from another namespace.
      !legacy && app % 11 === 5 && namespace !== wpNs
        ? { 'istio.io/use-waypoint': 'waypoint', 'istio.io/use-waypoint-namespace': wpNs }
        : {};
    service(
      name,
      namespace,
      octets('10.96', 256 + app),
      { app: name },
      [
        { name: 'http', port: 80, targetPort: named ? 'http' : 8080 },
        ...(twoPorts ? [{ name: 'grpc', port: 9090, targetPort: 9090, appProtocol: 'grpc' }] : []),
      ],
      svcLabels,
    );
    const count = Math.min(PODS_PER_APP, podBudget - pods);
    for (let i = 0; i < count; i++, pods++) {
      const version = i % 2 === 0 ? 'v1' : 'v2';
      const owner = `${name}-${version}-${templateHash(`${name}-${version}`)}`;
      pod({
        name: `${owner}-${templateHash(`${owner}-${i}`).slice(0, 5)}`,
        namespace,
        node: (app + i) % nodes.length,
        labels: {
          app: name,
          version,
          'pod-template-hash': templateHash(`${name}-${version}`),
          // One app's pods opt out of the namespace waypoint.
          ...(namespace === wpNs && app % 13 === 4 ? { 'istio.io/use-waypoint': 'none' } : {}),
        },
        sa: `${name}-sa`,
        owner,
        redirected: !legacy,
        ports: [{ name: 'http', containerPort: 8080 }, ...(twoPorts ? [{ name: 'grpc', containerPort: 9090 }] : [])],
      });
    }
    app++;
  }

  // Fields the apps above leave at their defaults, each at least once.
  const xNs = appNamespaces[2 % appNamespaces.length]!;
  // A waypoint for workloads and services alike, which one app's pods and Service ask for by label.
  waypoint('waypoint-all', xNs, 'all', '10.96.0.101', true);
  pod({
    name: `waypoint-all-${templateHash('waypoint-all')}-w0`,
    namespace: xNs,
    node: 0,
    labels: { 'gateway.networking.k8s.io/gateway-name': 'waypoint-all', 'istio.io/dataplane-mode': 'none' },
    sa: 'waypoint-all',
    owner: `waypoint-all-${templateHash('waypoint-all')}`,
    redirected: false,
    ports: [{ name: 'mesh', containerPort: 15008 }],
  });
  // Its Service: dual-stack, PreferClose, ingress through the waypoint.
  out.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta('bound', xNs, {
      labels: { app: 'bound', 'istio.io/use-waypoint': 'waypoint-all', 'istio.io/ingress-use-waypoint': 'true' },
    }),
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.120',
      clusterIPs: ['10.96.0.120', 'fd00:10:96::120'],
      ipFamilies: ['IPv4', 'IPv6'],
      ipFamilyPolicy: 'RequireDualStack',
      trafficDistribution: 'PreferClose',
      selector: { app: 'bound' },
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  });
  [0, 1].forEach((i) =>
    pod({
      name: `bound-${templateHash('bound')}-b${i}`,
      namespace: xNs,
      node: i % nodes.length,
      labels: { app: 'bound', 'istio.io/use-waypoint': 'waypoint-all' },
      sa: 'bound-sa',
      owner: `bound-${templateHash('bound')}`,
      redirected: true,
      // The second one is running but not ready.
      ready: i === 0,
      ports: [{ name: 'http', containerPort: 8080 }],
    }),
  );
  // A Service moving to the next waypoint of its namespace: a canary share of its connections.
  waypoint('waypoint-next', xNs, 'service', '10.96.0.102', false);
  service('canary', xNs, '10.96.0.121', { app: 'bound' }, [{ name: 'http', port: 80, targetPort: 8080 }], {
    'istio.io/use-waypoint': 'waypoint-all',
    'istio.io/use-waypoint-canary': 'waypoint-next',
  });
  const canary = out[out.length - 1]!;
  canary.metadata['annotations'] = { 'istio.io/use-waypoint-canary-weight': '10' };
  // A Job's pod, a CronJob's job's pod and a pod on the host's network.
  pod({
    name: 'migrate-7xk2p',
    namespace: xNs,
    node: 0,
    labels: { app: 'migrate' },
    sa: 'batch',
    owner: 'migrate',
    ownerKind: 'Job',
    redirected: true,
    ports: [],
  });
  pod({
    name: 'report-29400000-q8v4m',
    namespace: xNs,
    node: 1 % nodes.length,
    labels: { app: 'report' },
    sa: 'batch',
    owner: 'report-29400000',
    ownerKind: 'Job',
    redirected: true,
    ports: [],
  });
  out.push(
    podManifest({
      name: 'node-exporter-0',
      namespace: 'legacy',
      nodeName: nodes[0]!,
      hostIP: '172.18.0.2',
      ip: '172.18.0.2',
      labels: { app: 'node-exporter' },
      sa: 'node-exporter',
      redirected: false,
      hostNetwork: true,
      ports: [{ name: 'metrics', containerPort: 9100 }],
    }),
  );

  // A Service without a selector and its own EndpointSlice: endpoints that are not pods.
  const dbNs = appNamespaces[1 % appNamespaces.length]!;
  service('db', dbNs, '10.96.0.200', undefined, [{ name: 'tcp', port: 5432, targetPort: 5432 }]);
  out.push({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: meta('db-manual', dbNs, { labels: { 'kubernetes.io/service-name': 'db' } }),
    addressType: 'IPv4',
    ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
    endpoints: Array.from({ length: sliceEndpoints }, (_, i) => ({
      addresses: [octets('10.50', i + 1)],
      conditions: { ready: true },
    })),
  });

  // VMs: WorkloadEntries selected by a Kubernetes Service and by a ServiceEntry.
  for (let i = 0; i < weCount; i++) {
    out.push({
      apiVersion: 'networking.istio.io/v1',
      kind: 'WorkloadEntry',
      metadata: meta(`vm-${i}`, 'vms', { labels: { app: i % 2 === 0 ? 'vm-web' : 'vm-batch' } }),
      spec: {
        address: octets('172.20', i + 1),
        labels: { app: i % 2 === 0 ? 'vm-web' : 'vm-batch', version: 'v1' },
        serviceAccount: 'vm',
        ports: { http: 8080 },
        locality: 'region-1/zone-0',
      },
    });
  }
  service('vm-web', 'vms', '10.96.0.210', { app: 'vm-web' }, [{ name: 'http', port: 80, targetPort: 8080 }]);
  out.push({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: meta('vm-batch', 'vms'),
    spec: {
      hosts: ['batch.vms.example'],
      addresses: ['10.97.0.10'],
      ports: [{ number: 80, name: 'http', protocol: 'HTTP', targetPort: 8080 }],
      resolution: 'STATIC',
      workloadSelector: { labels: { app: 'vm-batch' } },
    },
  });

  // External services: inline endpoints with a spec address, DNS hosts with allocated addresses,
  // and a passthrough CIDR.
  out.push({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: meta('payments', 'external'),
    spec: {
      hosts: ['payments.example.com'],
      addresses: ['10.98.0.10'],
      ports: [{ number: 443, name: 'tls', protocol: 'TLS' }],
      resolution: 'STATIC',
      endpoints: Array.from({ length: seEndpoints }, (_, i) => ({
        address: octets('192.168', i + 1),
        labels: { app: 'payments' },
        ...(i % 3 === 0 ? { locality: 'region-1/zone-1' } : {}),
      })),
    },
  });
  out.push({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: meta('apis', 'external'),
    spec: {
      hosts: ['api.example.com', 'auth.example.com'],
      ports: [{ number: 443, name: 'https', protocol: 'HTTPS' }],
      resolution: 'DNS',
    },
    status: {
      addresses: [
        { host: 'api.example.com', value: `${ALLOCATED_PREFIX}.0.1` },
        { host: 'auth.example.com', value: `${ALLOCATED_PREFIX}.0.2` },
      ],
    },
  });
  out.push({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: meta('partner-range', 'external'),
    spec: {
      hosts: ['partner.internal'],
      addresses: ['10.99.0.0/24'],
      ports: [{ number: 8443, name: 'tcp', protocol: 'TCP' }],
      resolution: 'NONE',
    },
  });

  out.push({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: meta('internal-only', 'external'),
    spec: {
      hosts: ['internal.example.com'],
      addresses: ['10.98.0.20'],
      ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
      resolution: 'STATIC',
      exportTo: ['.'],
      endpoints: [{ address: '192.168.200.1' }],
    },
  });

  // Policies: global (root namespace), namespace-wide, selector-bound, DENY, and one attached to the
  // waypoint (not a ztunnel policy).
  const policy = (name: string, namespace: string, spec: Record<string, unknown>) =>
    out.push({
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: meta(name, namespace),
      spec,
    });
  policy('deny-blocked-range', 'istio-system', {
    action: 'DENY',
    rules: [{ from: [{ source: { ipBlocks: ['203.0.113.0/24'] } }] }],
  });
  for (const namespace of appNamespaces) {
    policy('same-namespace', namespace, {
      action: 'ALLOW',
      rules: [{ from: [{ source: { namespaces: [namespace, 'istio-system'] } }] }],
    });
    policy('app-0-from-sa', namespace, {
      selector: { matchLabels: { app: 'app-0' } },
      action: 'ALLOW',
      rules: [
        {
          from: [{ source: { principals: [`cluster.local/ns/${namespace}/sa/app-1-sa`] } }],
          to: [{ operation: { ports: ['8080'] } }],
        },
      ],
    });
    policy('deny-admin-port', namespace, {
      action: 'DENY',
      rules: [{ to: [{ operation: { ports: ['9999'] } }] }],
    });
  }
  policy('shapes', xNs, {
    selector: { matchLabels: { app: 'bound' } },
    action: 'ALLOW',
    rules: [
      {
        from: [
          { source: { principals: ['cluster.local/ns/apps-1/*', '*'], notNamespaces: ['legacy'] } },
          { source: { serviceAccounts: [`${xNs}/bound-sa`], notIpBlocks: ['10.50.0.0/16'] } },
        ],
        to: [{ operation: { notPorts: ['9090'] } }],
      },
    ],
  });
  policy('via-waypoint', wpNs, {
    targetRefs: [{ kind: 'Gateway', group: 'gateway.networking.k8s.io', name: 'waypoint' }],
    action: 'ALLOW',
    rules: [{ to: [{ operation: { methods: ['GET'] } }] }],
  });
  const peer = (name: string, namespace: string, spec: Record<string, unknown>) =>
    out.push({ apiVersion: 'security.istio.io/v1', kind: 'PeerAuthentication', metadata: meta(name, namespace), spec });
  peer('default', 'istio-system', { mtls: { mode: 'STRICT' } });
  peer('default', appNamespaces[1 % appNamespaces.length]!, { mtls: { mode: 'PERMISSIVE' } });
  peer('app-2-ports', appNamespaces[2 % appNamespaces.length]!, {
    selector: { matchLabels: { app: 'app-2' } },
    mtls: { mode: 'STRICT' },
    portLevelMtls: { '8080': { mode: 'PERMISSIVE' } },
  });
  return out;
}
