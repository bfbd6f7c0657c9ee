// One valid object of each kind the webhook validates (the 15 Istio kinds and a Gateway API
// kind), as the API server would send it inside an AdmissionReview.

import { cloneJson, Json } from './mutate-json';

export const ADMISSION_SEEDS: readonly [apiVersion: string, kind: string, spec: Json][] = [
  [
    'security.istio.io/v1',
    'AuthorizationPolicy',
    {
      action: 'DENY',
      selector: { matchLabels: { app: 'b' } },
      rules: [
        {
          from: [{ source: { principals: ['cluster.local/ns/a/sa/b'], ipBlocks: ['10.0.0.0/8'], namespaces: ['a'] } }],
          to: [{ operation: { ports: ['80'], paths: ['/a/{*}'], methods: ['GET'], hosts: ['a.com'] } }],
          when: [
            { key: 'source.ip', values: ['1.1.1.1'] },
            { key: 'request.headers[x]', notValues: ['y'] },
          ],
        },
      ],
    },
  ],
  [
    'security.istio.io/v1',
    'PeerAuthentication',
    {
      selector: { matchLabels: { app: 'b' } },
      mtls: { mode: 'STRICT' },
      portLevelMtls: { '8080': { mode: 'PERMISSIVE' } },
    },
  ],
  [
    'security.istio.io/v1',
    'RequestAuthentication',
    {
      selector: { matchLabels: { app: 'b' } },
      jwtRules: [
        {
          issuer: 'https://issuer',
          jwksUri: 'https://issuer/jwks',
          audiences: ['a'],
          fromHeaders: [{ name: 'x-jwt', prefix: 'Bearer ' }],
          fromParams: ['t'],
          outputClaimToHeaders: [{ header: 'x-sub', claim: 'sub' }],
          timeout: '5s',
        },
      ],
    },
  ],
  [
    'networking.istio.io/v1',
    'VirtualService',
    {
      hosts: ['reviews', 'reviews.bookinfo.svc.cluster.local'],
      gateways: ['mesh', 'ns/gw'],
      http: [
        {
          name: 'r1',
          match: [{ uri: { prefix: '/api' }, headers: { end_user: { exact: 'jason' } }, sourceLabels: { app: 'a' } }],
          route: [
            {
              destination: { host: 'reviews', subset: 'v2', port: { number: 9080 } },
              weight: 80,
              headers: { request: { set: { a: 'b' } } },
            },
            { destination: { host: 'reviews', subset: 'v3' }, weight: 20 },
          ],
          timeout: '2s',
          retries: { attempts: 3, perTryTimeout: '1s', retryOn: '5xx' },
          fault: { delay: { percentage: { value: 10 }, fixedDelay: '5s' } },
          corsPolicy: { allowOrigins: [{ exact: 'https://a' }], allowMethods: ['GET'] },
          mirror: { host: 'm' },
          mirrorPercentage: { value: 5 },
        },
      ],
      tls: [{ match: [{ sniHosts: ['reviews'], port: 443 }], route: [{ destination: { host: 'reviews' } }] }],
      tcp: [{ match: [{ port: 31400 }], route: [{ destination: { host: 'reviews', port: { number: 31400 } } }] }],
    },
  ],
  [
    'networking.istio.io/v1',
    'DestinationRule',
    {
      host: 'reviews',
      trafficPolicy: {
        connectionPool: {
          tcp: { maxConnections: 100, connectTimeout: '1s' },
          http: { http1MaxPendingRequests: 10, maxRequestsPerConnection: 1 },
        },
        outlierDetection: { consecutive5xxErrors: 5, interval: '10s', baseEjectionTime: '30s' },
        loadBalancer: { simple: 'LEAST_REQUEST' },
        tls: { mode: 'ISTIO_MUTUAL' },
        portLevelSettings: [{ port: { number: 9080 }, loadBalancer: { consistentHash: { httpHeaderName: 'x' } } }],
      },
      subsets: [
        { name: 'v1', labels: { version: 'v1' } },
        { name: 'v2', labels: { version: 'v2' }, trafficPolicy: { loadBalancer: { simple: 'ROUND_ROBIN' } } },
      ],
      exportTo: ['.'],
    },
  ],
  [
    'networking.istio.io/v1',
    'Gateway',
    {
      selector: { istio: 'ingressgateway' },
      servers: [
        {
          port: { number: 443, name: 'https', protocol: 'HTTPS' },
          hosts: ['ns/*.example.com'],
          tls: { mode: 'SIMPLE', credentialName: 'cert' },
        },
        { port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'], tls: { httpsRedirect: true } },
      ],
    },
  ],
  [
    'networking.istio.io/v1',
    'ServiceEntry',
    {
      hosts: ['api.example.com'],
      addresses: ['240.0.0.1'],
      ports: [
        { number: 443, name: 'https', protocol: 'TLS' },
        { number: 80, name: 'http', protocol: 'HTTP', targetPort: 8080 },
      ],
      location: 'MESH_EXTERNAL',
      resolution: 'DNS',
      endpoints: [{ address: 'a.example.com', ports: { https: 8443 }, labels: { a: 'b' }, weight: 1 }],
      exportTo: ['*'],
    },
  ],
  [
    'networking.istio.io/v1',
    'Sidecar',
    {
      workloadSelector: { labels: { app: 'a' } },
      ingress: [{ port: { number: 9080, name: 'http', protocol: 'HTTP' }, defaultEndpoint: '127.0.0.1:8080' }],
      egress: [
        { port: { number: 3306, name: 'mysql', protocol: 'MYSQL' }, hosts: ['*/mysql.db.svc.cluster.local'] },
        { hosts: ['./*', 'istio-system/*'] },
      ],
      outboundTrafficPolicy: { mode: 'REGISTRY_ONLY' },
    },
  ],
  [
    'networking.istio.io/v1',
    'WorkloadEntry',
    {
      address: '10.1.2.3',
      ports: { http: 8080 },
      labels: { app: 'vm' },
      serviceAccount: 'vm-sa',
      network: 'n1',
      locality: 'us/east/a',
      weight: 2,
    },
  ],
  [
    'networking.istio.io/v1',
    'WorkloadGroup',
    {
      metadata: { labels: { app: 'vm' } },
      template: { ports: { http: 8080 }, serviceAccount: 'vm-sa' },
      probe: { periodSeconds: 5, httpGet: { path: '/ready', port: 8080, httpHeaders: [{ name: 'x', value: 'y' }] } },
    },
  ],
  [
    'networking.istio.io/v1alpha3',
    'EnvoyFilter',
    {
      workloadSelector: { labels: { app: 'a' } },
      configPatches: [
        {
          applyTo: 'HTTP_FILTER',
          match: {
            context: 'SIDECAR_INBOUND',
            listener: {
              portNumber: 8080,
              filterChain: {
                filter: {
                  name: 'envoy.filters.network.http_connection_manager',
                  subFilter: { name: 'envoy.filters.http.router' },
                },
              },
            },
          },
          patch: {
            operation: 'INSERT_BEFORE',
            value: {
              name: 'envoy.lua',
              typed_config: {
                '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
                inlineCode: 'function envoy_on_request(h) end',
              },
            },
          },
        },
      ],
      priority: 10,
    },
  ],
  [
    'networking.istio.io/v1beta1',
    'ProxyConfig',
    {
      selector: { matchLabels: { app: 'a' } },
      concurrency: 2,
      environmentVariables: { A: 'b' },
      image: { imageType: 'distroless' },
    },
  ],
  [
    'telemetry.istio.io/v1',
    'Telemetry',
    {
      selector: { matchLabels: { app: 'a' } },
      metrics: [
        {
          providers: [{ name: 'prometheus' }],
          overrides: [
            {
              match: { metric: 'REQUEST_COUNT', mode: 'CLIENT_AND_SERVER' },
              tagOverrides: { request_method: { operation: 'REMOVE' } },
            },
          ],
        },
      ],
      tracing: [{ randomSamplingPercentage: 10, customTags: { a: { literal: { value: 'v' } } } }],
      accessLogging: [{ providers: [{ name: 'envoy' }], filter: { expression: 'response.code >= 400' } }],
    },
  ],
  [
    'extensions.istio.io/v1alpha1',
    'WasmPlugin',
    {
      selector: { matchLabels: { app: 'a' } },
      url: 'oci://ghcr.io/a/b:1',
      imagePullPolicy: 'IfNotPresent',
      phase: 'AUTHN',
      priority: 10,
      pluginConfig: { a: 1 },
      vmConfig: { env: [{ name: 'A', value: 'b' }] },
      match: [{ mode: 'SERVER', ports: [{ number: 8080 }] }],
    },
  ],
  [
    'extensions.istio.io/v1alpha1',
    'TrafficExtension',
    { lua: { inlineCode: 'function envoy_on_request(h) end' }, match: [{ mode: 'SERVER', ports: [{ number: 8080 }] }] },
  ],
  [
    'gateway.networking.k8s.io/v1',
    'HTTPRoute',
    {
      parentRefs: [{ name: 'gw' }],
      hostnames: ['a.example.com'],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'svc', port: 80 }] }],
    },
  ],
];

/** An AdmissionReview as the API server sends it for a create or update of `object`. */
export function admissionReview(
  apiVersion: string,
  kind: string,
  object: Json,
  operation: 'CREATE' | 'UPDATE' = 'CREATE',
): Json {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: group!, version: version!, kind },
      resource: { group: group!, version: version!, resource: plural },
      requestKind: { group: group!, version: version!, kind },
      name: 'fuzz',
      namespace: 'bookinfo',
      operation,
      userInfo: { username: 'admin', groups: ['system:authenticated'] },
      object,
      oldObject: operation === 'UPDATE' ? object : null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
    },
  };
}

/** A fresh copy of a seed as a whole object; callers may change it freely. */
export function seedObject(apiVersion: string, kind: string, spec: Json): Json {
  return {
    apiVersion,
    kind,
    metadata: { name: 'fuzz', namespace: 'bookinfo', labels: { app: 'a' }, annotations: { 'a/b': 'c' } },
    spec: cloneJson(spec),
  };
}
