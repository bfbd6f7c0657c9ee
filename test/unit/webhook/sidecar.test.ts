import { describeKind, InvalidCase, ValidCase } from './table';

const valid: ValidCase[] = [
  ['egress hosts', { egress: [{ hosts: ['./*', 'istio-system/*'] }] }],
  [
    'an ingress listener',
    { ingress: [{ port: { number: 9080, protocol: 'HTTP', name: 'http' }, defaultEndpoint: '127.0.0.1:8080' }] },
  ],
  ['an outbound policy only', { outboundTrafficPolicy: { mode: 'REGISTRY_ONLY' } }],
  [
    'egressProxy with ALLOW_ANY',
    {
      outboundTrafficPolicy: { mode: 'ALLOW_ANY', egressProxy: { host: 'proxy.example.com', port: { number: 3128 } } },
    },
  ],
  [
    'a unix socket egress listener',
    {
      egress: [{ port: { number: 0, protocol: 'HTTP', name: 'uds' }, bind: 'unix:///var/run/a.sock', hosts: ['*/*'] }],
    },
  ],
  [
    'a catch-all listener last',
    {
      egress: [
        { port: { number: 80, protocol: 'HTTP', name: 'http' }, hosts: ['ns/a.example.com'] },
        { hosts: ['*/*'] },
      ],
    },
  ],
  ['an inbound connection pool only', { inboundConnectionPool: { tcp: { maxConnections: 10 } } }],
  [
    'duplicated egress hosts warn',
    { egress: [{ hosts: ['ns/a.example.com', 'ns/a.example.com'] }] },
    'duplicated egress host: ns/a.example.com',
  ],
];

const invalid: InvalidCase[] = [
  ['an empty sidecar', {}, 'spec: sidecar: empty configuration provided'],
  [
    'an ingress without port',
    { ingress: [{ defaultEndpoint: '127.0.0.1:80' }] },
    'spec.ingress[0].port: sidecar: port is required for ingress listeners',
  ],
  [
    'duplicate ingress ports',
    {
      ingress: [
        { port: { number: 80, protocol: 'HTTP', name: 'a' } },
        { port: { number: 80, protocol: 'HTTP', name: 'b' } },
      ],
    },
    'sidecar: ports on IP bound listeners must be unique',
  ],
  [
    'a defaultEndpoint on another host',
    { ingress: [{ port: { number: 80, protocol: 'HTTP', name: 'a' }, defaultEndpoint: '10.0.0.1:8080' }] },
    'sidecar: defaultEndpoint must be of form 127.0.0.1:<port>',
  ],
  [
    'a defaultEndpoint without port number',
    { ingress: [{ port: { number: 80, protocol: 'HTTP', name: 'a' }, defaultEndpoint: '127.0.0.1:http' }] },
    'defaultEndpoint port (http) is not a number',
  ],
  [
    'ISTIO_MUTUAL ingress tls',
    { ingress: [{ port: { number: 443, protocol: 'HTTPS', name: 'a' }, tls: { mode: 'ISTIO_MUTUAL' } }] },
    'cannot set mode to ISTIO_MUTUAL in sidecar ingress tls',
  ],
  [
    'ingress tls with a credentialName',
    {
      ingress: [{ port: { number: 443, protocol: 'HTTPS', name: 'a' }, tls: { mode: 'SIMPLE', credentialName: 'x' } }],
    },
    'sidecar: credentialName is not currently supported',
  ],
  [
    'an egress listener without hosts',
    { egress: [{ port: { number: 80, protocol: 'HTTP', name: 'a' } }] },
    'spec.egress[0].hosts: sidecar: egress listener must contain at least one host',
  ],
  [
    'an egress host without namespace',
    { egress: [{ hosts: ['a.example.com'] }] },
    'spec.egress[0].hosts[0]: host must be of form namespace/dnsName',
  ],
  [
    'an egress host with a bad namespace',
    { egress: [{ hosts: ['Bad_NS/a.example.com'] }] },
    'invalid namespace value "Bad_NS" in sidecar',
  ],
  [
    'a catch-all listener that is not last',
    { egress: [{ hosts: ['*/*'] }, { port: { number: 80, protocol: 'HTTP', name: 'a' }, hosts: ['*/*'] }] },
    'the egress listener with empty port should be the last listener in the list',
  ],
  [
    'a port 0 egress without a unix bind',
    { egress: [{ port: { number: 0, protocol: 'HTTP', name: 'a' }, hosts: ['*/*'] }] },
    'sidecar: ports with 0 value must have a unix domain socket bind address',
  ],
  // Not a Sidecar enum name (the decoder refuses the name); istiod reaches this rule through the number 3.
  [
    'ALLOW_ANY_DYNAMIC_DNS',
    { outboundTrafficPolicy: { mode: 3 } },
    'ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig',
  ],
  [
    'egressProxy with REGISTRY_ONLY',
    { outboundTrafficPolicy: { mode: 'REGISTRY_ONLY', egressProxy: { host: 'p.example.com', port: { number: 1 } } } },
    'egress_proxy must be set only with ALLOW_ANY',
  ],
  [
    'an empty connection pool',
    { inboundConnectionPool: {} },
    'spec.inboundConnectionPool: connection pool must have at least one field',
  ],
  [
    'a wildcard in the workload selector',
    { workloadSelector: { labels: { app: '*' } }, egress: [{ hosts: ['*/*'] }] },
    'wildcard is not supported in selector',
  ],
];

describeKind('Sidecar', valid, invalid);
