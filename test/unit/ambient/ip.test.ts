import { isIPv4, isIPv6 } from 'node:net';
import { ipToText, parseIp } from '../../../src/ambient/ip';

/** A small deterministic generator, so a failure names a reproducible input. */
function* candidates(): Generator<string> {
  const parts = [
    '0',
    '1',
    '9',
    '10',
    '01',
    '00',
    '99',
    '100',
    '199',
    '255',
    '256',
    '300',
    '999',
    '1000',
    '',
    'a',
    '-1',
    ' 1',
  ];
  for (const a of parts)
    for (const b of ['0', '255', '01', ''])
      for (const c of ['1', '256']) for (const d of parts) yield `${a}.${b}.${c}.${d}`;
  yield* ['1.2.3', '1.2.3.4.5', '1.2.3.4.', '.1.2.3.4', '1..2.3', '1.2.3.4 ', '١.2.3.4', '1.2.3.4%eth0', '0.0.0.0'];
  yield* ['255.255.255.255', '255.255.255.2555', '::1', '::ffff:1.2.3.4', 'fd00::1', 'not an ip', ''];
}

describe('parseIp', () => {
  it('accepts as IPv4 exactly the texts net.isIPv4 accepts, and reads each part', () => {
    for (const text of candidates()) {
      const bytes = parseIp(text);
      const expected = isIPv4(text) ? 4 : isIPv6(text) ? 16 : undefined;
      expect({ text, length: bytes?.length }).toEqual({ text, length: expected });
      if (expected === 4) expect(Array.from(bytes ?? [])).toEqual(text.split('.').map(Number));
    }
  });
  it('writes IPv4 bytes back as the same dotted quad', () => {
    for (const text of ['0.0.0.0', '10.1.200.255', '255.255.255.255']) expect(ipToText(parseIp(text)!)).toBe(text);
  });
});
