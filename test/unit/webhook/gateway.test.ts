import { describeKind, InvalidCase, validate, ValidCase } from './table';

const http = { port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*.example.com'] };
const https = (tls: object) => ({
  port: { number: 443, name: 'https', protocol: 'HTTPS' },
  hosts: ['ns/app.example.com'],
  tls,
});
const gw = (...servers: object[]) => ({ servers });

const valid: ValidCase[] = [
  ['an HTTP server', gw(http)],
  ['an HTTPS server with a credentialName', gw(https({ mode: 'SIMPLE', credentialName: 'app-cert' }))],
  [
    'MUTUAL with files and a CA',
    gw(https({ mode: 'MUTUAL', serverCertificate: '/c', privateKey: '/k', caCertificates: '/ca' })),
  ],
  [
    'ISTIO_MUTUAL without certificates',
    gw({ port: { number: 15443, name: 'tls', protocol: 'TLS' }, hosts: ['*'], tls: { mode: 'ISTIO_MUTUAL' } }),
  ],
  ['an HTTP server with httpsRedirect', gw({ ...http, tls: { httpsRedirect: true } })],
  ['a host given as an IP address', gw({ ...http, hosts: ['10.0.0.1'] })],
  [
    'a unix socket bind with port 0',
    gw({ port: { number: 0, name: 'uds', protocol: 'HTTP' }, hosts: ['*'], bind: 'unix:///var/run/gw.sock' }),
  ],
  ['the ns/* and ./host forms', gw({ ...http, hosts: ['prod/*', './a.example.com'] })],
  [
    'PASSTHROUGH with certificates warns',
    gw({
      port: { number: 443, name: 'tls', protocol: 'TLS' },
      hosts: ['*'],
      tls: { mode: 'PASSTHROUGH', serverCertificate: '/c' },
    }),
    'PASSTHROUGH mode does not use certificates',
  ],
  [
    'an invalid cipher warns',
    gw(https({ mode: 'SIMPLE', credentialName: 'c', cipherSuites: ['NOT-A-CIPHER'] })),
    'ignoring invalid cipher suites: [NOT-A-CIPHER]',
  ],
];

const invalid: InvalidCase[] = [
  ['a name with dots', gw(http), 'metadata.name: invalid gateway name: "my.gateway"', { name: 'my.gateway' }],
  ['no servers', {}, 'spec.servers: gateway must have at least one server'],
  [
    'a server without hosts',
    gw({ port: http.port }),
    'spec.servers[0].hosts: server config must contain at least one host',
  ],
  [
    'a short host name',
    gw({ ...http, hosts: ['app'] }),
    'spec.servers[0].hosts[0]: short names (non FQDN) are not allowed',
  ],
  [
    'a partial wildcard host',
    gw({ ...http, hosts: ['*foo.example.com'] }),
    'partial wildcard "*foo.example.com" not allowed',
  ],
  [
    'a bad namespace in ns/host',
    gw({ ...http, hosts: ['Bad_NS/a.example.com'] }),
    'invalid namespace value "Bad_NS" in gateway',
  ],
  ['a server without port', gw({ hosts: ['*'] }), 'spec.servers[0].port: port is required'],
  [
    'a port without name',
    gw({ ...http, port: { number: 80, protocol: 'HTTP' } }),
    'spec.servers[0].port.name: port name must be set',
  ],
  ['an unknown protocol', gw({ ...http, port: { number: 80, name: 'x', protocol: 'FTP' } }), 'invalid protocol "FTP"'],
  [
    'port 70000',
    gw({ ...http, port: { number: 70000, name: 'x', protocol: 'HTTP' } }),
    'port number 70000 must be in the range 1..65535',
  ],
  [
    'a targetPort',
    gw({ ...http, port: { number: 80, name: 'x', protocol: 'HTTP', targetPort: 8080 } }),
    'targetPort has no impact on Gateways',
  ],
  [
    'duplicate port names',
    gw(http, { ...http, port: { number: 81, name: 'http', protocol: 'HTTP' } }),
    'port names in servers must be unique: duplicate name http',
  ],
  [
    'HTTPS without tls',
    gw({ ...https({}), tls: undefined }),
    'spec.servers[0].tls: server must have TLS settings for HTTPS/TLS protocols',
  ],
  [
    'TLS settings on a TCP port',
    gw({ port: { number: 31400, name: 'tcp', protocol: 'TCP' }, hosts: ['*'], tls: { mode: 'SIMPLE' } }),
    'server cannot have TLS settings for non HTTPS/TLS ports',
  ],
  [
    'SIMPLE TLS settings on an HTTP port',
    gw({ ...http, tls: { mode: 'SIMPLE', credentialName: 'x' } }),
    'server cannot have TLS settings for plain text HTTP ports',
  ],
  [
    'ISTIO_MUTUAL with a certificate',
    gw(https({ mode: 'ISTIO_MUTUAL', serverCertificate: '/c' })),
    'ISTIO_MUTUAL TLS cannot have associated server certificate',
  ],
  [
    'SIMPLE without certificate or credential',
    gw(https({ mode: 'SIMPLE' })),
    'SIMPLE TLS requires a server certificate',
  ],
  [
    'MUTUAL without a CA bundle',
    gw(https({ mode: 'MUTUAL', serverCertificate: '/c', privateKey: '/k' })),
    'MUTUAL TLS requires a client CA bundle',
  ],
  [
    'two certificate sources',
    gw(https({ mode: 'SIMPLE', credentialName: 'a', serverCertificate: '/c', privateKey: '/k' })),
    'only one of credential_name',
  ],
  [
    'a CRL with SIMPLE',
    gw(https({ mode: 'SIMPLE', serverCertificate: '/c', privateKey: '/k', caCrl: '/crl' })),
    'CRL is not supported with SIMPLE TLS',
  ],
  [
    'a unix bind with a port number',
    gw({ ...http, bind: 'unix:///a.sock' }),
    'port number must be 0 for unix domain socket',
  ],
  ['a bind that is not an IP', gw({ ...http, bind: 'localhost' }), 'spec.servers[0].bind: localhost is not a valid IP'],
  ['an unknown TLS mode', gw(https({ mode: 'STRICT' })), 'spec.servers[0].tls.mode: unknown value "STRICT"'],
];

describeKind('Gateway', valid, invalid);

test('the always-reject annotation rejects even a valid Gateway (istiod readiness probe)', () => {
  const v = validate('Gateway', gw(http), { annotations: { 'internal.istio.io/webhook-always-reject': 'true' } });
  expect(v.errors).toEqual([
    'metadata.annotations: "internal.istio.io/webhook-always-reject" annotation found, rejecting',
  ]);
});
