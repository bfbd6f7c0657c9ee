import { describeKind, InvalidCase, ValidCase } from './table';

const base = {
  hosts: ['api.example.com'],
  ports: [{ number: 443, name: 'https', protocol: 'TLS' }],
  resolution: 'DNS',
};

const valid: ValidCase[] = [
  ['an external DNS service', base],
  [
    'a STATIC service with endpoints',
    {
      hosts: ['db.internal'],
      addresses: ['10.1.0.5'],
      ports: [{ number: 5432, name: 'tcp', protocol: 'TCP' }],
      resolution: 'STATIC',
      endpoints: [{ address: '10.1.0.10', ports: { tcp: 5433 } }],
    },
  ],
  [
    'NONE with a CIDR',
    {
      hosts: ['range.internal'],
      addresses: ['10.2.0.0/16'],
      ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
      resolution: 'NONE',
    },
  ],
  ['DNS with FQDN endpoints', { ...base, endpoints: [{ address: 'a.example.com' }, { address: '1.2.3.4' }] }],
  [
    'several hosts with HTTP ports',
    {
      hosts: ['a.example.com', 'b.example.com'],
      ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
      resolution: 'DNS',
    },
  ],
  [
    'DYNAMIC_DNS with a wildcard host',
    { hosts: ['*.example.com'], ports: [{ number: 443, name: 'tls', protocol: 'TLS' }], resolution: 'DYNAMIC_DNS' },
  ],
  [
    'a workloadSelector without endpoints',
    {
      hosts: ['svc.internal'],
      ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
      resolution: 'STATIC',
      workloadSelector: { labels: { app: 'vm' } },
    },
  ],
  ['exportTo the own namespace and another', { ...base, exportTo: ['.', 'other'] }],
  [
    'a partial wildcard host warns',
    { ...base, resolution: 'NONE', hosts: ['*foo.example.com'] },
    'partial wildcard "*foo.example.com" not allowed',
  ],
  [
    'no address with auto-allocation disabled warns',
    { hosts: ['x.example.com'], ports: [{ number: 9000, name: 'tcp', protocol: 'TCP' }], resolution: 'DNS' },
    'addresses are required',
    { labels: { 'networking.istio.io/enable-autoallocate-ip': 'false' } },
  ],
];

const invalid: InvalidCase[] = [
  ['no hosts', { ...base, hosts: [] }, 'spec.hosts: service entry must have at least one host'],
  ['the * host', { ...base, hosts: ['*'] }, 'spec.hosts[0]: invalid host *'],
  [
    'a host with a bad label',
    { ...base, hosts: ['bad_host.example.com'] },
    'spec.hosts[0]: domain name "bad_host.example.com" invalid',
  ],
  ['a host with a numeric TLD', { ...base, hosts: ['example.123'] }, 'top level domain "123" cannot be all-numeric'],
  ['a bad address', { ...base, addresses: ['300.1.1.1'] }, 'spec.addresses[0]: 300.1.1.1 is not a valid IP'],
  [
    'a CIDR with DNS resolution',
    { ...base, addresses: ['10.0.0.0/8'] },
    'CIDR addresses are allowed only for NONE/STATIC resolution types',
  ],
  [
    'workloadSelector and endpoints',
    { ...base, resolution: 'STATIC', workloadSelector: { labels: { a: 'b' } }, endpoints: [{ address: '1.1.1.1' }] },
    'only one of WorkloadSelector or Endpoints is allowed',
  ],
  [
    'a duplicate port name',
    {
      ...base,
      ports: [
        { number: 80, name: 'p', protocol: 'HTTP' },
        { number: 81, name: 'p', protocol: 'HTTP' },
      ],
    },
    'spec.ports[1].name: service entry port name "p" already defined',
  ],
  [
    'a duplicate port number',
    {
      ...base,
      ports: [
        { number: 80, name: 'a', protocol: 'HTTP' },
        { number: 80, name: 'b', protocol: 'HTTP' },
      ],
    },
    'spec.ports[1].number: service entry port 80 already defined',
  ],
  [
    'port 0',
    { ...base, ports: [{ number: 0, name: 'a', protocol: 'HTTP' }] },
    'port number 0 must be in the range 1..65535',
  ],
  [
    'an unknown protocol',
    { ...base, ports: [{ number: 80, name: 'a', protocol: 'QUIC' }] },
    'unsupported protocol: QUIC',
  ],
  [
    'an invalid port name',
    { ...base, ports: [{ number: 80, name: 'Bad_Name', protocol: 'HTTP' }] },
    'invalid port name: Bad_Name',
  ],
  [
    'endpoints with resolution NONE',
    { ...base, resolution: 'NONE', endpoints: [{ address: '1.1.1.1' }] },
    'no endpoints should be provided for resolution type none',
  ],
  [
    'a STATIC endpoint with a hostname',
    { ...base, resolution: 'STATIC', endpoints: [{ address: 'a.example.com' }] },
    'spec.endpoints[0].address: endpoint address "a.example.com" is not a valid IP address',
  ],
  [
    'a STATIC endpoint port the service does not declare',
    { ...base, resolution: 'STATIC', endpoints: [{ address: '1.1.1.1', ports: { other: 8080 } }] },
    'endpoint port 8080 is not defined by the service entry',
  ],
  [
    'DNS without endpoints and a bad host',
    { ...base, hosts: ['*.example.com', 'x..y'] },
    'hosts must be FQDN or contain only prefix wildcards',
  ],
  [
    'DNS_ROUND_ROBIN with two endpoints',
    { ...base, resolution: 'DNS_ROUND_ROBIN', endpoints: [{ address: '1.1.1.1' }, { address: '2.2.2.2' }] },
    'there must only be 0 or 1 endpoint for resolution mode DNS_ROUND_ROBIN',
  ],
  [
    'DYNAMIC_DNS with a non-wildcard host',
    { ...base, resolution: 'DYNAMIC_DNS' },
    'host must be wildcarded for resolution mode DYNAMIC_DNS',
  ],
  [
    'DYNAMIC_DNS with a TCP port',
    { hosts: ['*.example.com'], ports: [{ number: 22, name: 'ssh', protocol: 'TCP' }], resolution: 'DYNAMIC_DNS' },
    'only HTTP, TLS, GRPC, and HTTP2 protocols are supported',
  ],
  [
    'several hosts with a TCP port',
    { ...base, hosts: ['a.example.com', 'b.example.com'], ports: [{ number: 22, name: 'ssh', protocol: 'TCP' }] },
    'multiple hosts provided with non-HTTP, non-TLS ports',
  ],
  [
    'exportTo with * and another namespace',
    { ...base, exportTo: ['*', 'ns'] },
    'cannot have both public (*) and non-public exportTo values',
  ],
  ['exportTo with a duplicate', { ...base, exportTo: ['ns', 'ns'] }, 'duplicate entries in exportTo for entry ns'],
  ['an unknown resolution', { ...base, resolution: 'MAGIC' }, 'spec.resolution: unknown value "MAGIC"'],
  [
    'a wildcard in the workload selector',
    { ...base, resolution: 'STATIC', workloadSelector: { labels: { app: '*' } } },
    'wildcard is not supported in selector',
  ],
];

describeKind('ServiceEntry', valid, invalid);
