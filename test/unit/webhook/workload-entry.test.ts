import { describeKind, InvalidCase, ValidCase } from './table';

const valid: ValidCase[] = [
  ['an IP address', { address: '10.0.0.1', ports: { http: 8080 }, labels: { app: 'vm' } }],
  ['an FQDN address', { address: 'vm1.example.com' }],
  ['a unix socket', { address: 'unix:///var/run/app.sock' }],
  ['an IPv6 address', { address: '2001:db8::1' }],
  ['no address with a network warns', { network: 'remote' }, 'address is unset with network "remote"'],
];

const invalid: InvalidCase[] = [
  ['no address and no network', {}, 'spec.address: address is required'],
  [
    'a unix socket with ports',
    { address: 'unix:///a.sock', ports: { http: 80 } },
    'unix endpoint unix:///a.sock must not include ports',
  ],
  ['a relative unix path', { address: 'unix://a.sock' }, 'is not an absolute path'],
  [
    'an address that is neither IP nor FQDN',
    { address: 'not_valid!' },
    'endpoint address "not_valid!" is not a valid FQDN or an IP address',
  ],
  ['a bad port name', { address: '1.1.1.1', ports: { Bad_Port: 80 } }, 'invalid port name: Bad_Port'],
  ['port 0', { address: '1.1.1.1', ports: { http: 0 } }, 'port number 0 must be in the range 1..65535'],
  ['a bad label key', { address: '1.1.1.1', labels: { '-bad': 'x' } }, 'spec.labels: invalid tag key: "-bad"'],
  ['a bad label value', { address: '1.1.1.1', labels: { app: 'has space' } }, 'invalid tag value: "has space"'],
];

describeKind('WorkloadEntry', valid, invalid);
