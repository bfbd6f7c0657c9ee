// meshConfig validation, after istiod's ValidateMeshConfig (pkg/config/validation/agent): run on
// the effective config after each layer is applied, as istiod's ApplyMeshConfig does. Errors refuse
// the layer; warnings (istiod logs these and goes on) are reported once and the layer applies.
// Every finding names its field path. The rules, by field:
// - proxyListenPort: 1..65535;
// - connectTimeout: at least 1ms, at most 1h, whole milliseconds;
// - protocolDetectionTimeout: 0s (off) or whole milliseconds;
// - trustDomain and each trustDomainAliases[i]: DNS-1123 labels joined by dots;
// - serviceSettings[i].hosts: DNS names, a wildcard first label allowed;
// - defaultConfig: see validate-proxy.ts;
// - localityLbSetting, zoneAwareLbSetting, defaultTrafficPolicy, defaultInboundHttpRetryPolicy:
//   see validate-traffic.ts;
// - meshMTLS.ecdhCurves: not allowed; tlsDefaults.ecdhCurves: unknown or repeated curves warn;
// - extensionProviders: warnings only, see validate-providers.ts.
// Enum names, field types and label selectors are checked per layer when it is decoded (decode.ts,
// selectors.ts).

import { proxyConfigIssues } from './validate-proxy';
import { trafficIssues } from './validate-traffic';
import { extensionProviderWarnings } from './validate-providers';
import {
  durationMs,
  isDns1123Label,
  Issues,
  listOf,
  mapOf,
  portProblem,
  wildcardDomainProblem,
} from './validate-common';
import type { MeshConfig, MeshConfigIssue } from './types';

export { proxyAddressProblem } from './validate-common';

/** istiod's bounds on connectTimeout. */
export const CONNECT_TIMEOUT_MIN_MS = 1;
export const CONNECT_TIMEOUT_MAX_MS = 60 * 60 * 1000;

/** The curves istiod passes to Envoy in tlsDefaults.ecdhCurves (its ValidECDHCurves); "" is ignored. */
const ECDH_CURVES = new Set([
  '',
  'P-224',
  'P-256',
  'P-521',
  'P-384',
  'X25519',
  'X25519Kyber768Draft00',
  'X25519MLKEM768',
]);

/** A trust domain is DNS-1123 labels joined by dots; a trailing dot is allowed ("istio.io."). */
export function trustDomainProblem(domain: string): string | undefined {
  if (domain === '') return 'empty domain name not allowed';
  const parts = domain.split('.');
  for (let i = 0; i < parts.length; i++) {
    const label = parts[i] ?? '';
    if (i === parts.length - 1 && label === '' && i > 0) break;
    if (!isDns1123Label(label))
      return `trust domain name "${domain}" invalid: label "${label}" is not a lowercase DNS-1123 label`;
  }
  return undefined;
}

function topLevelIssues(mesh: MeshConfig, out: Issues): void {
  out.add('proxyListenPort', portProblem(mesh['proxyListenPort']));
  const connect = durationMs(mesh['connectTimeout']);
  if (connect === undefined || connect < CONNECT_TIMEOUT_MIN_MS || connect > CONNECT_TIMEOUT_MAX_MS) {
    out.add('connectTimeout', `must be between 1ms and 1h, got ${JSON.stringify(mesh['connectTimeout'] ?? null)}`);
  } else if (connect % 1 !== 0) {
    out.add('connectTimeout', 'only durations to ms precision are supported');
  }
  const detect = durationMs(mesh['protocolDetectionTimeout'] ?? '0s');
  if (detect === undefined || detect % 1 !== 0)
    out.add('protocolDetectionTimeout', 'only durations to ms precision are supported');

  out.add('trustDomain', trustDomainProblem(mesh.trustDomain));
  mesh.trustDomainAliases.forEach((alias, i) => out.add(`trustDomainAliases[${i}]`, trustDomainProblem(alias)));

  listOf(mesh['serviceSettings']).forEach((s, i) =>
    listOf(mapOf(s)['hosts']).forEach((h, j) => {
      const problem = wildcardDomainProblem(typeof h === 'string' ? h : '');
      out.add(`serviceSettings[${i}].hosts[${j}]`, problem && `host \`${String(h)}\`: ${problem}`);
    }),
  );
}

function tlsIssues(mesh: MeshConfig, errors: Issues, warnings: Issues): void {
  const mtls = mapOf(mesh['meshMTLS']);
  if (mtls['ecdhCurves'] !== undefined && mtls['ecdhCurves'] !== null)
    errors.add('meshMTLS.ecdhCurves', 'mesh TLS does not support ECDH curves configuration');
  const curves = listOf(mapOf(mesh['tlsDefaults'])['ecdhCurves']).map(String);
  const unknown = [...new Set(curves.filter((c) => !ECDH_CURVES.has(c)))].sort();
  const repeated = [...new Set(curves.filter((c, i) => ECDH_CURVES.has(c) && curves.indexOf(c) !== i))].sort();
  if (unknown.length > 0)
    warnings.add('tlsDefaults.ecdhCurves', `detected unrecognized ECDH curves: [${unknown.join(' ')}]`);
  if (repeated.length > 0)
    warnings.add('tlsDefaults.ecdhCurves', `detected duplicate ECDH curves: [${repeated.join(' ')}]`);
}

export interface MeshValidation {
  errors: MeshConfigIssue[];
  warnings: MeshConfigIssue[];
}

/** Errors and warnings of an effective meshConfig. */
export function checkMeshConfig(mesh: MeshConfig): MeshValidation {
  const errors = new Issues();
  const warnings = new Issues();
  topLevelIssues(mesh, errors);
  // defaultConfig is always there: the defaults have one and a layer's null means "not set".
  proxyConfigIssues(mesh.defaultConfig, errors, warnings);
  trafficIssues(mesh, errors, warnings);
  tlsIssues(mesh, errors, warnings);
  extensionProviderWarnings(mesh['extensionProviders'], warnings);
  return { errors: errors.list, warnings: warnings.list };
}

/** The errors alone: what makes istiod refuse the config. */
export function validateMeshConfig(mesh: MeshConfig): MeshConfigIssue[] {
  return checkMeshConfig(mesh).errors;
}
