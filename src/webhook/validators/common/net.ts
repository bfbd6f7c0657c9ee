// IP addresses and CIDR blocks with Go's netip rules (istiod parses them with netip.ParseAddr and
// netip.ParsePrefix): no leading zeros in IPv4 octets, IPv6 zones allowed on addresses but not on
// prefixes, a prefix length in decimal within the address family's bits.

import { isIPv4, isIPv6 } from 'node:net';

const IPV4_OCTET = /^(0|[1-9]\d{0,2})$/;

function isGoIPv4(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => IPV4_OCTET.test(p) && Number(p) <= 255);
}

function isGoIPv6(text: string, allowZone: boolean): boolean {
  const pct = text.indexOf('%');
  if (pct >= 0) {
    if (!allowZone || pct === text.length - 1) return false;
    text = text.slice(0, pct);
  }
  if (!isIPv6(text)) return false;
  // An embedded IPv4 tail follows the same no-leading-zero rule.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  return !tail.includes('.') || isGoIPv4(tail);
}

/** True for an IPv4 or IPv6 address (with an optional IPv6 zone). */
export function isIPAddress(text: string): boolean {
  return isGoIPv4(text) || isGoIPv6(text, true);
}

/** True for a CIDR block such as 10.0.0.0/8 or 2001:db8::/32; host bits may be set, as in Go. */
export function isCIDR(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return false;
  const addr = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(bits)) return false;
  if (isGoIPv4(addr)) return Number(bits) <= 32;
  if (isGoIPv6(addr, false)) return Number(bits) <= 128;
  return false;
}

/** Node's own check, for callers that only need to know the family. */
export function ipFamily(text: string): 4 | 6 | 0 {
  return isIPv4(text) ? 4 : isIPv6(text) ? 6 : 0;
}

/** istiod's ValidateIPSubnet: one slash means a CIDR, otherwise an address. */
export function ipSubnetError(text: string): string | undefined {
  if (text.split('/').length === 2) return isCIDR(text) ? undefined : `${text} is not a valid CIDR block`;
  return isIPAddress(text) ? undefined : `${text} is not a valid IP`;
}

/** istiod's security.ValidateIPs for authorization values: an address, or a CIDR when it has a slash. */
export function authzIPError(text: string): string | undefined {
  if (text.includes('/')) return isCIDR(text) ? undefined : `bad CIDR range (${text})`;
  return isIPAddress(text) ? undefined : `bad IP address (${text})`;
}

export const UNIX_ADDRESS_PREFIX = 'unix://';

/** A unix socket path: absolute and not ending in "/", or an abstract "@name". */
export function unixAddressError(addr: string): string | undefined {
  if (addr.length === 0) return 'unix address must not be empty';
  if (addr.startsWith('@')) return undefined;
  if (!addr.startsWith('/') || addr.endsWith('/')) return `${addr} is not an absolute path to a file`;
  return undefined;
}
