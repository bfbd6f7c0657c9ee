// meshConfig validation, after istiod's ValidateMeshConfig (pkg/config/validation): the rules
// that matter for a control plane serving ztunnel, each naming the field it is about.

import { isIP } from 'node:net';
import { parseDuration } from '../config/duration';
import type { MeshConfig, MeshConfigIssue } from './types';

/** istiod's bounds on connectTimeout. */
export const CONNECT_TIMEOUT_MIN_MS = 1;
export const CONNECT_TIMEOUT_MAX_MS = 60 * 60 * 1000;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL_MAX = 63;
const DNS_NAME_MAX = 255;

function isDns1123Label(label: string): boolean {
  return label.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(label);
}

/** A trust domain is DNS-1123 labels joined by dots; a trailing dot is allowed ("istio.io."). */
export function trustDomainProblem(domain: string): string | undefined {
  if (domain === '') return 'empty domain name not allowed';
  const parts = domain.split('.');
  for (const [i, label] of parts.entries()) {
    if (i === parts.length - 1 && label === '' && i > 0) break;
    if (!isDns1123Label(label))
      return `trust domain name "${domain}" invalid: label "${label}" is not a lowercase DNS-1123 label`;
  }
  return undefined;
}

function fqdnProblem(host: string): string | undefined {
  if (host === '') return 'empty host';
  if (host.length > DNS_NAME_MAX) return `host "${host}" is longer than ${DNS_NAME_MAX}`;
  const parts = host.split('.');
  // split() always returns at least one part.
  if (/^\d+$/.test(parts.at(-1) ?? '')) return `host "${host}" has an all-numeric top-level label`;
  for (const [i, label] of parts.entries()) {
    if (i === parts.length - 1 && label === '' && i > 0) break;
    if (!isDns1123Label(label)) return `host "${host}" is not a valid DNS name (label "${label}")`;
  }
  return undefined;
}

function portProblem(port: unknown): string | undefined {
  return Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535
    ? undefined
    : `port ${JSON.stringify(port)} must be in the range 1..65535`;
}

/** host:port with a DNS name or IP host, as istiod's ValidateProxyAddress. */
export function proxyAddressProblem(address: string): string | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):([^:]*)$/.exec(address);
  if (!m) return `"${address}" is not host:port`;
  // Group 2 matches (perhaps empty) whenever group 1 does not and group 3 always does: '' is never used.
  const host = m[1] ?? m[2] ?? '';
  const portText = m[3] ?? '';
  if (!/^\d+$/.test(portText)) return `port "${portText}" is not a number`;
  const port = portProblem(Number(portText));
  if (port) return port;
  if (isIP(host) !== 0) return undefined;
  const hostProblem = fqdnProblem(host);
  return hostProblem ? `"${host}" is not a valid hostname or IP address` : undefined;
}

function durationMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

export function validateMeshConfig(mesh: MeshConfig): MeshConfigIssue[] {
  const issues: MeshConfigIssue[] = [];
  const add = (field: string, message: string | undefined) => {
    if (message) issues.push({ field, message });
  };

  add('trustDomain', trustDomainProblem(mesh.trustDomain));
  mesh.trustDomainAliases.forEach((alias, i) => add(`trustDomainAliases[${i}]`, trustDomainProblem(alias)));

  add('proxyListenPort', portProblem(mesh['proxyListenPort']));
  const connect = durationMs(mesh['connectTimeout']);
  if (connect === undefined || connect < CONNECT_TIMEOUT_MIN_MS || connect > CONNECT_TIMEOUT_MAX_MS) {
    add('connectTimeout', `must be between 1ms and 1h, got ${JSON.stringify(mesh['connectTimeout'])}`);
  } else if (connect % 1 !== 0) {
    add('connectTimeout', 'only durations to ms precision are supported');
  }
  const detect = durationMs(mesh['protocolDetectionTimeout'] ?? '0s');
  if (detect === undefined || detect < 0 || detect % 1 !== 0)
    add('protocolDetectionTimeout', 'must be 0s or a whole number of milliseconds');

  const pc = mesh.defaultConfig;
  if (!pc.discoveryAddress)
    add('defaultConfig.discoveryAddress', 'must be set to the address of the discovery service (host:port)');
  else add('defaultConfig.discoveryAddress', proxyAddressProblem(pc.discoveryAddress));
  if (!pc['configPath']) add('defaultConfig.configPath', 'must be set');
  if (!pc['binaryPath']) add('defaultConfig.binaryPath', 'must be set');
  if (pc['serviceCluster'] === undefined && pc['tracingServiceName'] === undefined) {
    add('defaultConfig.serviceCluster', 'one of serviceCluster or tracingServiceName must be set');
  } else if (pc['serviceCluster'] === '') {
    add('defaultConfig.serviceCluster', 'must not be empty');
  }
  const drain = durationMs(pc['drainDuration']);
  if (drain === undefined || drain < 1) add('defaultConfig.drainDuration', 'must be a duration of at least 1ms');
  else if (drain % 1000 !== 0) add('defaultConfig.drainDuration', 'only durations to seconds precision are supported');
  add('defaultConfig.proxyAdminPort', portProblem(pc['proxyAdminPort']));
  add('defaultConfig.statusPort', portProblem(pc['statusPort']));
  const auth = pc['controlPlaneAuthPolicy'];
  if (auth !== undefined && auth !== 'NONE' && auth !== 'MUTUAL_TLS')
    add('defaultConfig.controlPlaneAuthPolicy', `must be NONE or MUTUAL_TLS, got ${JSON.stringify(auth)}`);

  const mtls = mesh['meshMTLS'] as Record<string, unknown> | undefined;
  if (mtls && mtls['ecdhCurves'] !== undefined)
    add('meshMTLS.ecdhCurves', 'mesh TLS does not support ECDH curves configuration');
  return issues;
}
