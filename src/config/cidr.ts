// CIDR prefixes given in the environment (the ServiceEntry auto-allocation ranges), checked while
// the environment is read so a typo exits 2 with one line instead of failing in the controller.

import { isIPv4, isIPv6 } from 'node:net';

export type IpFamily = 'IPv4' | 'IPv6';

/** Why `text` is not an `family` prefix such as 240.240.0.0/16, or undefined when it is one. */
export function prefixProblem(family: IpFamily, text: string): string | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return `"${text}" is not a CIDR prefix (address/length, e.g. ${example(family)})`;
  const address = text.slice(0, slash);
  const lengthText = text.slice(slash + 1);
  const isFamily = family === 'IPv4' ? isIPv4(address) : isIPv6(address) && !address.includes('%');
  if (!isFamily) {
    const other = family === 'IPv4' ? isIPv6(address) : isIPv4(address);
    return other
      ? `"${text}" is not an ${family} prefix (e.g. ${example(family)})`
      : `"${address}" is not an ${family} address`;
  }
  const max = family === 'IPv4' ? 32 : 128;
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > max)
    return `prefix length "${lengthText}" is not a number from 0 to ${max}`;
  return undefined;
}

function example(family: IpFamily): string {
  return family === 'IPv4' ? '240.240.0.0/16' : '2001:2::/48';
}
