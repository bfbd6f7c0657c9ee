import {
  addressToJson,
  authorizationToJson,
  decodeAddress,
  encodeAddress,
  encodeAuthorization,
  versionOf,
} from '../../../src/ambient/codec';
import { ipToText, maskCidr, parseCidr, parseIp } from '../../../src/ambient/ip';
import { VERSION_HEX_LENGTH } from '../../../src/ambient/constants';
import { TunnelProtocol } from '../../../src/ambient/messages';

describe('codec', () => {
  it('encodes a workload Address with field numbers ztunnel reads', () => {
    const bytes = encodeAddress({ workload: { uid: 'u', name: 'n' } });
    // Address.workload = field 1 (0x0a); Workload.uid = field 20 (0xa2 0x01), name = field 1 (0x0a).
    expect(Buffer.from(bytes).toString('hex')).toBe('0a070a016ea2010175');
  });

  it('proto3 defaults left out of the message are not encoded', () => {
    expect(encodeAddress({ service: { hostname: 'h' } })).toEqual(
      encodeAddress({ service: { hostname: 'h', canonical: undefined } }),
    );
    expect(Buffer.from(encodeAddress({ service: { hostname: 'h' } })).toString('hex')).toBe('12031a0168');
  });

  it('round-trips a workload with services map, capacity and waypoint', () => {
    const bytes = encodeAddress({
      workload: {
        uid: 'x',
        addresses: [Uint8Array.from([10, 0, 0, 1])],
        services: { 'a/b': { ports: [{ servicePort: 80, targetPort: 8080 }] } },
        capacity: { value: 2 },
        waypoint: { address: { address: Uint8Array.from([1, 2, 3, 4]) }, hboneMtlsPort: 15008 },
      },
    });
    const w = decodeAddress(bytes).workload!;
    expect(w.capacity?.value).toBe(2);
    expect(w.services!['a/b']!.ports![0]!.targetPort).toBe(8080);
  });

  it('JSON view shows addresses as text IPs and enums by name', () => {
    const bytes = encodeAddress({
      workload: { uid: 'x', addresses: [Uint8Array.from([10, 0, 0, 1])], tunnelProtocol: TunnelProtocol.HBONE },
    });
    expect(addressToJson(bytes)).toEqual({ workload: { uid: 'x', addresses: ['10.0.0.1'], tunnelProtocol: 'HBONE' } });
    const authz = encodeAuthorization({
      name: 'p',
      namespace: 'ns',
      rules: [
        {
          clauses: [
            {
              matches: [
                {
                  notPrincipals: [{ presence: {} }],
                  sourceIps: [{ address: Uint8Array.from([1, 1, 1, 1]), length: 32 }],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(authorizationToJson(authz)).toEqual({
      name: 'p',
      namespace: 'ns',
      rules: [
        {
          clauses: [
            { matches: [{ notPrincipals: [{ presence: {} }], sourceIps: [{ address: '1.1.1.1', length: 32 }] }] },
          ],
        },
      ],
    });
  });

  it('JSON view maps the capacity wrapper to its bare value', () => {
    expect(addressToJson(encodeAddress({ workload: { uid: 'x', capacity: { value: 3 } } }))).toEqual({
      workload: { uid: 'x', capacity: 3 },
    });
  });

  it(`version is ${VERSION_HEX_LENGTH} hex characters and equal for equal bytes`, () => {
    const v = versionOf(Uint8Array.from([1, 2, 3]));
    expect(v).toMatch(new RegExp(`^[0-9a-f]{${VERSION_HEX_LENGTH}}$`));
    expect(versionOf(Uint8Array.from([1, 2, 3]))).toBe(v);
    expect(versionOf(Uint8Array.from([1, 2, 4]))).not.toBe(v);
  });
});

describe('ip', () => {
  it.each([
    ['10.1.2.3', '10.1.2.3', 4],
    ['2001:db8::1', '2001:db8::1', 16],
    ['::ffff:1.2.3.4', '::ffff:102:304', 16],
    ['::', '::', 16],
  ])('parses %s', (text, back, len) => {
    const b = parseIp(text)!;
    expect(b.length).toBe(len);
    expect(ipToText(b)).toBe(back);
  });
  it.each(['', 'foo', '1.2.3', '300.1.1.1', '1.2.3.4/8'])('rejects %p', (text) =>
    expect(parseIp(text)).toBeUndefined(),
  );
  it('a bare IP becomes a host prefix; a CIDR keeps its host bits unless masked', () => {
    expect(parseCidr('10.0.0.1')!.length).toBe(32);
    expect(parseCidr('2001:db8::/32')!.length).toBe(32);
    expect(ipToText(parseCidr('10.1.2.3/8')!.address)).toBe('10.1.2.3');
    expect(ipToText(maskCidr(parseCidr('10.1.2.3/8')!).address)).toBe('10.0.0.0');
    expect(parseCidr('10.0.0.1/33')).toBeUndefined();
  });
});
