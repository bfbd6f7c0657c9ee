// The small checks istiod's meshConfig validation is built from (pkg/config/validation/agent):
// DNS names, ports, durations, host:port addresses. Each returns the problem, or undefined.

import { isIP } from 'node:net';
import { parseDuration } from '../config/duration';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL_MAX = 63;
/** A DNS name longer than this is refused (istiod's CheckDNS1123Preconditions). */
export const DNS_NAME_MAX = 255;

export function isDns1123Label(label: string): boolean {
  return label.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(label);
}

/** Labels joined by dots; a trailing dot is allowed ("istio.io."); the last label is not all digits. */
export function fqdnProblem(host: string): string | undefined {
  if (host === '') return 'empty domain name not allowed';
  if (host.length > DNS_NAME_MAX) return `domain name "${host}" too long (max ${DNS_NAME_MAX})`;
  return labelsProblem(host);
}

function labelsProblem(domain: string): string | undefined {
  const parts = domain.split('.');
  const top = parts[parts.length - 1] ?? '';
  if (/^-?\d+$/.test(top)) return `domain name "${domain}" invalid (top level domain "${top}" cannot be all-numeric)`;
  for (let i = 0; i < parts.length; i++) {
    const label = parts[i] ?? '';
    if (i === parts.length - 1 && label === '' && i > 0) break;
    if (!isDns1123Label(label)) return `domain name "${domain}" invalid (label "${label}" invalid)`;
  }
  return undefined;
}

/** An FQDN whose first label may be "*" or start with "*" ("*.example.com", "*"). */
export function wildcardDomainProblem(domain: string): string | undefined {
  if (domain === '') return 'empty domain name not allowed';
  if (domain.length > DNS_NAME_MAX) return `domain name "${domain}" too long (max ${DNS_NAME_MAX})`;
  const dot = domain.indexOf('.');
  const first = dot < 0 ? domain : domain.slice(0, dot);
  const wildcardLabel = first === '*' || (first.startsWith('*') && isDns1123Label(first.slice(1)));
  if (!wildcardLabel && !isDns1123Label(first)) return `domain name "${domain}" invalid (label "${first}" invalid)`;
  return dot < 0 ? undefined : labelsProblem(domain.slice(dot + 1));
}

export function portProblem(port: unknown): string | undefined {
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535
    ? undefined
    : `port ${JSON.stringify(port ?? 0)} must be in the range 1..65535`;
}

/** host:port with a DNS name or IP host, as istiod's ValidateProxyAddress. */
export function proxyAddressProblem(address: string): string | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):([^:]*)$/.exec(address);
  if (!m) return `"${address}" is not host:port`;
  const host = m[1] ?? m[2] ?? '';
  const portText = m[3] ?? '';
  if (!/^\d+$/.test(portText)) return `port "${portText}" is not a number`;
  const port = portProblem(Number(portText));
  if (port) return port;
  if (isIP(host) !== 0) return undefined;
  return fqdnProblem(host) ? `"${host}" is not a valid hostname or IP address` : undefined;
}

/** Milliseconds of a duration string, or undefined when it is missing or not one. */
export function durationMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/** istiod's ValidateDuration: at least 1ms, and whole milliseconds. */
export function durationProblem(text: unknown): string | undefined {
  const ms = durationMs(text);
  if (ms === undefined || ms < 1) return 'duration must be greater than 1ms';
  if (ms % 1 !== 0) return 'only durations to ms precision are supported';
  return undefined;
}

export const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The mapping at `v`, or an empty one: validation reads optional sub-messages through this. */
export const mapOf = (v: unknown): Record<string, unknown> => (isMap(v) ? v : {});

export const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Collects problems, each naming its field path. */
export class Issues {
  readonly list: { field: string; message: string }[] = [];
  add(field: string, message: string | undefined): void {
    if (message) this.list.push({ field, message });
  }
}

/**
 * A set of HTTP status codes written as the tables they come from read: "100 200-208 226 ...",
 * single codes and inclusive ranges separated by spaces.
 */
export function statusCodes(spec: string): ReadonlySet<number> {
  const out = new Set<number>();
  for (const part of spec.split(' ').filter((p) => p !== '')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`bad status code range "${part}"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let code = from; code <= to; code++) out.add(code);
  }
  return out;
}
