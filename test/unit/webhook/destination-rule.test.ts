import { describeKind, InvalidCase, ValidCase } from './table';

const dr = (extra: object) => ({ host: 'reviews.default.svc.cluster.local', ...extra });

const valid: ValidCase[] = [
  ['a host only', dr({})],
  [
    'subsets with labels',
    dr({
      subsets: [
        { name: 'v1', labels: { version: 'v1' } },
        { name: 'v2', labels: { version: 'v2' } },
      ],
    }),
  ],
  [
    'a connection pool and outlier detection',
    dr({
      trafficPolicy: {
        connectionPool: { tcp: { maxConnections: 100, connectTimeout: '30ms' }, http: { http2MaxRequests: 1000 } },
        outlierDetection: { consecutive5xxErrors: 7, interval: '5m', baseEjectionTime: '15m' },
      },
    }),
  ],
  ['ISTIO_MUTUAL client TLS', dr({ trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' } } })],
  ['MUTUAL with a credentialName', dr({ trafficPolicy: { tls: { mode: 'MUTUAL', credentialName: 'client-cert' } } })],
  [
    'maglev with a prime table size',
    dr({
      trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: 'x-user', maglev: { tableSize: 65537 } } } },
    }),
  ],
  ['a wildcard host', { host: '*.example.com' }],
  [
    'locality distribute adding to 100',
    dr({
      trafficPolicy: {
        loadBalancer: {
          localityLbSetting: { distribute: [{ from: 'us-east/z1/*', to: { 'us-east/z1/*': 80, 'us-west/*': 20 } }] },
        },
      },
    }),
  ],
  [
    'failover without outlier detection warns',
    dr({ trafficPolicy: { loadBalancer: { localityLbSetting: { failover: [{ from: 'us-east', to: 'us-west' }] } } } }),
    'outlier detection policy must be provided for failover',
  ],
  ['a workload selector with exportTo "."', dr({ workloadSelector: { matchLabels: { app: 'a' } }, exportTo: ['.'] })],
  [
    'port-level settings',
    dr({ trafficPolicy: { portLevelSettings: [{ port: { number: 80 }, loadBalancer: { simple: 'LEAST_REQUEST' } }] } }),
  ],
  [
    'deprecated consecutiveErrors warns',
    dr({ trafficPolicy: { outlierDetection: { consecutiveErrors: 5 } } }),
    'outlier detection consecutive errors is deprecated',
  ],
  [
    'minimumRingSize warns',
    dr({ trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, minimumRingSize: 1024 } } } }),
    'MinimumRingSize is deprecated',
  ],
];

const invalid: InvalidCase[] = [
  ['no host', {}, 'spec.host: empty domain name not allowed'],
  ['a bad host', { host: 'bad_host.example.com' }, 'spec.host: domain name "bad_host.example.com" invalid'],
  [
    'an empty traffic policy',
    dr({ trafficPolicy: {} }),
    'spec.trafficPolicy: traffic policy must have at least one field',
  ],
  [
    'tunnel and proxyProtocol together',
    dr({
      trafficPolicy: { tunnel: { targetHost: 'a.example.com', targetPort: 80 }, proxyProtocol: { version: 'V1' } },
    }),
    'tunnel and proxyProtocol must not be set together',
  ],
  [
    'a duplicate subset name',
    dr({ subsets: [{ name: 'v1' }, { name: 'v1' }] }),
    'spec.subsets[1].name: duplicate subset names: v1',
  ],
  [
    'a subset name that is not a DNS label',
    dr({ subsets: [{ name: 'v1.0' }] }),
    'spec.subsets[0].name: subset name is invalid: v1.0',
  ],
  [
    'a subset with bad labels',
    dr({ subsets: [{ name: 'v1', labels: { version: 'has space' } }] }),
    'invalid tag value: "has space"',
  ],
  [
    'a negative max connections',
    dr({ trafficPolicy: { connectionPool: { tcp: { maxConnections: -1 } } } }),
    'spec.trafficPolicy.connectionPool.tcp.maxConnections: max connections must be non-negative',
  ],
  [
    'a negative http2MaxRequests',
    dr({ trafficPolicy: { connectionPool: { http: { http2MaxRequests: -1 } } } }),
    'http2 max requests must be non-negative',
  ],
  [
    'an empty connection pool',
    dr({ trafficPolicy: { connectionPool: {} } }),
    'connection pool must have at least one field',
  ],
  [
    'maglev without a table size',
    dr({ trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, maglev: {} } } } }),
    'tableSize must be set for maglev',
  ],
  [
    'maglev with a composite table size',
    dr({ trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 1000 } } } } }),
    'tableSize must be a prime number for maglev',
  ],
  [
    'maglev at the table size limit',
    dr({ trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 5000011 } } } } }),
    'tableSize must be less than 5000011 for maglev',
  ],
  [
    'locality and zone-aware LB together',
    dr({ trafficPolicy: { loadBalancer: { localityLbSetting: { enabled: true }, zoneAwareLbSetting: {} } } }),
    'only one of localityLbSetting and zoneAwareLbSetting can be set',
  ],
  [
    'MUTUAL without a client certificate',
    dr({ trafficPolicy: { tls: { mode: 'MUTUAL', privateKey: '/k' } } }),
    'client certificate required for mutual tls',
  ],
  [
    'MUTUAL without a private key',
    dr({ trafficPolicy: { tls: { mode: 'MUTUAL', clientCertificate: '/c' } } }),
    'private key required for mutual tls',
  ],
  [
    'a credentialName with a client certificate',
    dr({ trafficPolicy: { tls: { mode: 'SIMPLE', credentialName: 'c', clientCertificate: '/c' } } }),
    'cannot specify client certificates or CA certificate or CA CRL If credentialName is set',
  ],
  [
    'an outlier interval below 1ms',
    dr({ trafficPolicy: { outlierDetection: { interval: '0s' } } }),
    'spec.trafficPolicy.outlierDetection.interval: duration must be greater than 1ms',
  ],
  [
    'maxEjectionPercent over 100',
    dr({ trafficPolicy: { outlierDetection: { maxEjectionPercent: 150 } } }),
    'percentage 150 is not in range 0..100',
  ],
  [
    'local origin failures without splitting',
    dr({ trafficPolicy: { outlierDetection: { consecutiveLocalOriginFailures: 3 } } }),
    'split external local origin errors is set to false',
  ],
  [
    'a port-level setting without port',
    dr({ trafficPolicy: { portLevelSettings: [{ tls: { mode: 'ISTIO_MUTUAL' } }] } }),
    'portTrafficPolicy must have valid port',
  ],
  [
    'a selector with exportTo beyond the namespace',
    dr({ workloadSelector: { matchLabels: { app: 'a' } }, exportTo: ['other'] }),
    'destination rule with workload selector cannot have exportTo beyond current namespace',
  ],
  [
    'exportTo with the own namespace and .',
    dr({ exportTo: ['default', '.'] }),
    'duplicate entries in exportTo: . and current namespace default',
  ],
  [
    'a tunnel with a bad protocol',
    dr({ trafficPolicy: { tunnel: { protocol: 'GET', targetHost: 'a.example.com', targetPort: 80 } } }),
    'tunnel protocol must be "CONNECT" or "POST"',
  ],
  [
    'distribute weights not adding to 100',
    dr({
      trafficPolicy: {
        outlierDetection: {},
        loadBalancer: {
          localityLbSetting: { distribute: [{ from: 'us-east/*', to: { 'us-east/*': 60, 'us-west/*': 30 } }] },
        },
      },
    }),
    'localityLbSetting.distribute[0].to: total locality weight 90 != 100',
  ],
  [
    'a distribute weight of 0',
    dr({
      trafficPolicy: {
        loadBalancer: { localityLbSetting: { distribute: [{ from: 'a/*', to: { 'a/*': 0, 'b/*': 100 } }] } },
      },
    }),
    'locality weight must be in range [1, 100]',
  ],
  [
    'overlapping distribute sources',
    dr({
      trafficPolicy: {
        loadBalancer: {
          localityLbSetting: {
            distribute: [
              { from: 'us/*', to: { 'us/*': 100 } },
              { from: 'us/z1', to: { 'us/*': 100 } },
            ],
          },
        },
      },
    }),
    'locality us/z1 overlap with previous specified ones',
  ],
  [
    'distribute with failover',
    dr({
      trafficPolicy: {
        loadBalancer: {
          localityLbSetting: { distribute: [{ from: 'a', to: { b: 100 } }], failover: [{ from: 'a', to: 'b' }] },
        },
      },
    }),
    "can not simultaneously specify 'distribute' and 'failover'",
  ],
  [
    'failover to the same region',
    dr({
      trafficPolicy: {
        outlierDetection: {},
        loadBalancer: { localityLbSetting: { failover: [{ from: 'us-east', to: 'us-east' }] } },
      },
    }),
    'locality lb failover settings must specify different regions',
  ],
  [
    'failover to a zone',
    dr({
      trafficPolicy: { loadBalancer: { localityLbSetting: { failover: [{ from: 'us-east', to: 'us-west/z1' }] } } },
    }),
    'locality lb failover only specify region',
  ],
  [
    'zone-aware failover priority on a topology label',
    dr({
      trafficPolicy: { loadBalancer: { zoneAwareLbSetting: { failoverPriority: ['topology.kubernetes.io/zone'] } } },
    }),
    "'failover_priority' for zone aware lb must not use topology label",
  ],
  [
    'a cookie without name',
    dr({ trafficPolicy: { loadBalancer: { consistentHash: { httpCookie: { ttl: '0s' } } } } }),
    'name required for HttpCookie',
  ],
];

describeKind('DestinationRule', valid, invalid);
