// IP text <-> bytes. Workload and Service addresses travel as raw 4- or 16-byte values; anything
// that does not parse is rejected here so it never reaches ztunnel (which NACKs bad lengths).

import { isIPv6 } from 'node:net';

export function parseIp(text: string | undefined): Uint8Array | undefined {
  if (!text) return undefined;
  const v4 = ipv4Bytes(text);
  if (v4) return v4;
  if (isIPv6(text)) return ipv6Bytes(text);
  return undefined;
}

/** Longest dotted-quad text: 255.255.255.255. */
const MAX_IPV4_TEXT = 15;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const DOT = 46;

/**
 * Dotted-quad text to 4 bytes, accepting exactly what net.isIPv4 accepts (four decimal parts of
 * 0-255, no leading zeros). Every pod IP goes through here in a build; net.isIPv4's regular
 * expression and a split were a tenth of the pod's derivation.
 */
function ipv4Bytes(text: string): Uint8Array | undefined {
  if (text.length > MAX_IPV4_TEXT) return undefined;
  const out = new Uint8Array(4);
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : DOT;
    if (c === DOT) {
      if (digits === 0 || part > 3) return undefined;
      out[part++] = value;
      value = 0;
      digits = 0;
    } else if (c >= DIGIT_0 && c <= DIGIT_9) {
      if (digits > 0 && value === 0) return undefined; // a leading zero
      value = value * 10 + (c - DIGIT_0);
      if (++digits > 3 || value > 255) return undefined;
    } else return undefined;
  }
  return part === 4 ? out : undefined;
}

/** The 16-bit group at byte `i`, big-endian; `?? 0` is what << and | already do with a missing byte. */
const group16 = (bytes: Uint8Array, i: number): number => ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);

function ipv6Bytes(text: string): Uint8Array | undefined {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIp(tail);
    if (!v4) return undefined;
    s = `${s.slice(0, lastColon + 1)}${group16(v4, 0).toString(16)}:${group16(v4, 2).toString(16)}`;
  }
  const [head, rest] = s.split('::') as [string, string | undefined];
  const a = head ? head.split(':') : [];
  const b = rest ? rest.split(':') : [];
  const groups = rest === undefined ? a : [...a, ...new Array<string>(8 - a.length - b.length).fill('0'), ...b];
  if (groups.length !== 8) return undefined;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}

export function ipToText(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0] ?? 0}.${bytes[1] ?? 0}.${bytes[2] ?? 0}.${bytes[3] ?? 0}`;
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(group16(bytes, i).toString(16));
    // Compress the longest run of zero groups, as RFC 5952 asks.
    let best = -1;
    let bestLen = 0;
    for (let i = 0; i < 8;) {
      if (groups[i] !== '0') {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && groups[j] === '0') j++;
      if (j - i > bestLen && j - i > 1) {
        best = i;
        bestLen = j - i;
      }
      i = j;
    }
    if (best < 0) return groups.join(':');
    return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
  }
  return Buffer.from(bytes).toString('hex');
}

export interface Cidr {
  address: Uint8Array;
  length: number;
}

/** "ip" or "ip/len"; the address is kept as written (not masked), as istiod's netip.ParsePrefix does. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const address = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!address) return undefined;
  const max = address.length * 8;
  if (slash < 0) return { address, length: max };
  const lenText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText)) return undefined;
  const length = Number(lenText);
  if (length > max) return undefined;
  return { address, length };
}

/** Zeroes the host bits of a prefix (ServiceEntry CIDR addresses are masked). */
export function maskCidr(cidr: Cidr): Cidr {
  const out = Uint8Array.from(cidr.address);
  for (let bit = cidr.length; bit < out.length * 8; bit++) out[bit >> 3] = (out[bit >> 3] ?? 0) & ~(0x80 >> (bit & 7));
  return { address: out, length: cidr.length };
}
