import { servingSans } from '../../../src/ca/serving-cert/serving-cert-issuer';

const base = {
  namespace: 'istio-system',
  revision: 'default',
  customHosts: [],
  discoveryAddress: undefined,
  local: false,
};

describe("istiod's serving certificate names", () => {
  test('the default revision gets istiod, istiod-remote and istio-pilot in its namespace', () => {
    expect(servingSans(base)).toEqual([
      { dns: 'istio-pilot.istio-system.svc' },
      { dns: 'istiod-remote.istio-system.svc' },
      { dns: 'istiod.istio-system.svc' },
    ]);
  });

  test('a non-default revision adds istiod-<rev>', () => {
    expect(servingSans({ ...base, revision: 'canary' })).toContainEqual({ dns: 'istiod-canary.istio-system.svc' });
  });

  test('the discoveryAddress host and ISTIOD_CUSTOM_HOST entries are added, without ports or schemes', () => {
    const sans = servingSans({
      ...base,
      discoveryAddress: 'https://istiod.mesh.example:15012',
      customHosts: ['a.example', 'b.example'],
    });
    expect(sans).toEqual(
      expect.arrayContaining([{ dns: 'istiod.mesh.example' }, { dns: 'a.example' }, { dns: 'b.example' }]),
    );
  });

  test('local mode adds localhost and the loopback IPs', () => {
    expect(servingSans({ ...base, local: true })).toEqual(
      expect.arrayContaining([{ dns: 'localhost' }, { ip: '127.0.0.1' }, { ip: '::1' }]),
    );
  });

  test('names are a sorted set', () => {
    const dns = servingSans({ ...base, customHosts: ['istiod.istio-system.svc', 'a.example'] }).map((s) =>
      'dns' in s ? s.dns : '',
    );
    expect(dns).toEqual([...new Set(dns)].sort());
  });
});
