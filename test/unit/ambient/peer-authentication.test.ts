import { decodeAddress, decodeAuthorization } from '../../../src/ambient/codec';
import { AUTHORIZATION_TYPE_URL, ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { indexOf, peerAuthn, pod, storeWith, Obj } from '../../support/ambient/fixtures';

const ROOT = 'istio-system';
const STATIC = `${ROOT}/istio_converted_static_strict`;
const CONVERTED = 'default/converted_peer_authentication_wl';
const wlPod = pod('a', { labels: { app: 'a' } });
const UID = 'Kubernetes//Pod/default/a';

function derive(pas: Obj[]) {
  const index = indexOf(storeWith([wlPod, ...pas]));
  const policies = new Map([...index.all(AUTHORIZATION_TYPE_URL)].map((r) => [r.name, decodeAuthorization(r.bytes)]));
  const refs = decodeAddress(index.get(ADDRESS_TYPE_URL, UID)!.bytes).workload!.authorizationPolicies ?? [];
  return { policies, refs };
}

const mesh = (mode: string, created?: string) => peerAuthn('mesh', ROOT, { mtls: { mode } }, created);
const nsPa = (mode: string, name = 'ns', created?: string) => peerAuthn(name, 'default', { mtls: { mode } }, created);
const wl = (mode: string | undefined, ports: Record<string, string>) =>
  peerAuthn('wl', 'default', {
    selector: { matchLabels: { app: 'a' } },
    ...(mode ? { mtls: { mode } } : {}),
    portLevelMtls: Object.fromEntries(Object.entries(ports).map(([p, m]) => [p, { mode: m }])),
  });

describe('PeerAuthentication: static strict policy', () => {
  it('no PeerAuthentication: no policy sent, nothing referenced', () => {
    const r = derive([]);
    expect(r.policies.size).toBe(0);
    expect(r.refs).toEqual([]);
  });
  it('any PeerAuthentication, even PERMISSIVE, sends the static strict DENY policy in the root namespace', () => {
    const r = derive([nsPa('PERMISSIVE')]);
    expect(r.policies.get(STATIC)).toEqual(
      expect.objectContaining({
        name: 'istio_converted_static_strict',
        namespace: ROOT,
        scope: 2,
        action: 1,
        rules: [{ clauses: [{ matches: [{ notPrincipals: [{ presence: {} }] }] }] }],
      }),
    );
    expect(r.refs).toEqual([]);
  });
});

describe('PeerAuthentication: effective mode and references', () => {
  it.each([
    ['mesh STRICT references the static strict policy', [mesh('STRICT')], [STATIC]],
    ['mesh STRICT, namespace PERMISSIVE references nothing', [mesh('STRICT'), nsPa('PERMISSIVE')], []],
    ['mesh PERMISSIVE, namespace STRICT references static strict', [mesh('PERMISSIVE'), nsPa('STRICT')], [STATIC]],
    ['namespace UNSET inherits mesh STRICT', [mesh('STRICT'), nsPa('UNSET')], [STATIC]],
    ['DISABLE is treated like PERMISSIVE', [mesh('STRICT'), nsPa('DISABLE')], []],
    [
      'the oldest namespace policy wins',
      [nsPa('STRICT', 'old', '2020-01-01T00:00:00Z'), nsPa('PERMISSIVE', 'young', '2023-01-01T00:00:00Z')],
      [STATIC],
    ],
    [
      'a root-namespace PeerAuthentication with a selector is ignored',
      [peerAuthn('r', ROOT, { selector: { matchLabels: { app: 'a' } }, mtls: { mode: 'STRICT' } })],
      [],
    ],
    [
      'a workload STRICT policy without ports references static strict',
      [peerAuthn('w', 'default', { selector: { matchLabels: { app: 'a' } }, mtls: { mode: 'STRICT' } })],
      [STATIC],
    ],
    [
      'a workload policy that does not select the pod is ignored',
      [peerAuthn('w', 'default', { selector: { matchLabels: { app: 'zzz' } }, mtls: { mode: 'STRICT' } })],
      [],
    ],
  ])('%s', (_rule, pas, refs) => {
    expect(derive(pas).refs).toEqual(refs);
  });
});

describe('PeerAuthentication: port-level mTLS', () => {
  it('workload STRICT with a PERMISSIVE port: converted policy denies without identity except on that port, and replaces static strict', () => {
    const r = derive([wl('STRICT', { '8080': 'PERMISSIVE' })]);
    expect(r.refs).toEqual([CONVERTED]);
    expect(r.policies.get(CONVERTED)!.rules).toEqual([
      {
        clauses: [{ matches: [{ notPrincipals: [{ presence: {} }] }] }, { matches: [{ notDestinationPorts: [8080] }] }],
      },
    ]);
  });
  it('workload STRICT with only STRICT ports: no converted policy, static strict referenced', () => {
    const r = derive([wl('STRICT', { '8080': 'STRICT' })]);
    expect(r.policies.has(CONVERTED)).toBe(false);
    expect(r.refs).toEqual([STATIC]);
  });
  it('workload PERMISSIVE with a STRICT port: one rule per strict port', () => {
    const r = derive([wl('PERMISSIVE', { '9000': 'STRICT', '8000': 'STRICT' })]);
    expect(r.refs).toEqual([CONVERTED]);
    expect(r.policies.get(CONVERTED)!.rules).toEqual([
      { clauses: [{ matches: [{ notPrincipals: [{ presence: {} }], destinationPorts: [8000] }] }] },
      { clauses: [{ matches: [{ notPrincipals: [{ presence: {} }], destinationPorts: [9000] }] }] },
    ]);
  });
  it('workload UNSET under a STRICT namespace with a PERMISSIVE port merges the strict clause in', () => {
    const r = derive([nsPa('STRICT'), wl(undefined, { '8080': 'PERMISSIVE' })]);
    expect(r.refs).toEqual([CONVERTED]);
    expect(r.policies.get(CONVERTED)!.rules).toEqual([
      {
        clauses: [{ matches: [{ notDestinationPorts: [8080] }] }, { matches: [{ notPrincipals: [{ presence: {} }] }] }],
      },
    ]);
  });
  it('workload UNSET under a permissive parent with a STRICT port references the converted policy', () => {
    const r = derive([nsPa('PERMISSIVE'), wl(undefined, { '8080': 'STRICT' })]);
    expect(r.refs).toEqual([CONVERTED]);
    expect(r.policies.get(CONVERTED)!.rules).toEqual([
      { clauses: [{ matches: [{ notPrincipals: [{ presence: {} }], destinationPorts: [8080] }] }] },
    ]);
  });
  it('PERMISSIVE ports under a PERMISSIVE workload are ignored', () => {
    const r = derive([wl('PERMISSIVE', { '8080': 'PERMISSIVE' })]);
    expect(r.policies.has(CONVERTED)).toBe(false);
    expect(r.refs).toEqual([]);
  });
  it('quirk: PERMISSIVE workload, no namespace policy, mesh STRICT: the STRICT port is skipped, yet the workload references the never-generated converted name', () => {
    const r = derive([mesh('STRICT'), wl('PERMISSIVE', { '8080': 'STRICT' })]);
    expect(r.policies.has(CONVERTED)).toBe(false);
    expect(r.refs).toEqual([CONVERTED]);
  });
  it('quirk: UNSET workload, PERMISSIVE namespace policy, mesh STRICT: a PERMISSIVE port is skipped though the mesh is STRICT', () => {
    const r = derive([mesh('STRICT'), nsPa('PERMISSIVE'), wl(undefined, { '8080': 'PERMISSIVE' })]);
    expect(r.policies.has(CONVERTED)).toBe(false);
  });
  it('quirk: a DISABLE port under an inherited STRICT mode is converted but not referenced (only PERMISSIVE ports count there)', () => {
    const r = derive([mesh('STRICT'), wl(undefined, { '8080': 'DISABLE' })]);
    expect(r.policies.has(CONVERTED)).toBe(true);
    expect(r.refs).toEqual([STATIC]);
  });
  it('a PeerAuthentication in the root namespace is never converted', () => {
    const r = derive([
      peerAuthn('wl', ROOT, {
        selector: { matchLabels: { app: 'a' } },
        mtls: { mode: 'STRICT' },
        portLevelMtls: { '80': { mode: 'PERMISSIVE' } },
      }),
    ]);
    expect([...r.policies.keys()]).toEqual([STATIC]);
  });
});
