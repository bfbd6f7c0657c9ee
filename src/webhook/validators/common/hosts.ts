// Host names, DNS labels and Kubernetes label syntax, with istiod's rules
// (pkg/config/labels and pkg/config/validation/agent).

import { isIPAddress } from './net';

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DOMAIN_MAX_LENGTH = 255;
const DNS_PREFIX_MAX_LENGTH = 253;

const DNS1123_LABEL = '[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?';
const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL}$`);
const wildcardLabelRe = new RegExp(`^(\\*|(\\*|\\*-)?${DNS1123_LABEL})$`);
const QUALIFIED_NAME = '(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const tagKeyRe = new RegExp(`^(${DNS1123_LABEL}(?:\\.${DNS1123_LABEL})*/)?(${QUALIFIED_NAME})$`);
const labelValueRe = new RegExp(`^(${QUALIFIED_NAME})?$`);

export function isDNS1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX_LENGTH && dns1123LabelRe.test(value);
}

export function isWildcardDNS1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX_LENGTH && wildcardLabelRe.test(value);
}

function domainPreconditions(name: string): string | undefined {
  if (name.length > DOMAIN_MAX_LENGTH) return `domain name "${name}" too long (max ${DOMAIN_MAX_LENGTH})`;
  if (name.length === 0) return 'empty domain name not allowed';
  return undefined;
}

/** Dot-separated DNS-1123 labels; the top-level label may not be all digits; a trailing dot is allowed. */
export function dns1123LabelsError(domain: string): string | undefined {
  const parts = domain.split('.');
  const tld = parts.at(-1) ?? ''; // split() always returns at least one part
  if (/^[+-]?\d+$/.test(tld))
    return `domain name "${domain}" invalid (top level domain "${tld}" cannot be all-numeric)`;
  for (const [i, label] of parts.entries()) {
    if (i === parts.length - 1 && label === '') return undefined;
    if (!isDNS1123Label(label)) return `domain name "${domain}" invalid (label "${label}" invalid)`;
  }
  return undefined;
}

/** A host where only the first label may be a wildcard (`*`, `*.example.com`, `*-foo.example.com`). */
export function wildcardDomainError(domain: string): string | undefined {
  const pre = domainPreconditions(domain);
  if (pre) return pre;
  const dot = domain.indexOf('.');
  const first = dot < 0 ? domain : domain.slice(0, dot);
  if (!isWildcardDNS1123Label(first)) return `domain name "${domain}" invalid (label "${first}" invalid)`;
  return dot < 0 ? undefined : dns1123LabelsError(domain.slice(dot + 1));
}

export function fqdnError(fqdn: string): string | undefined {
  return domainPreconditions(fqdn) ?? dns1123LabelsError(fqdn);
}

/** A wildcard is only allowed as the whole host or as a leading `*.` label. */
export function partialWildcardError(host: string): string | undefined {
  if (host.includes('*') && host.length !== 1 && !host.startsWith('*.'))
    return `partial wildcard "${host}" not allowed`;
  return undefined;
}

export function isWildcarded(host: string): boolean {
  return host.startsWith('*');
}

/** The host part of a Gateway server or Sidecar egress host. */
function hostnamePartErrors(hostname: string, isGateway: boolean): string[] {
  const errs: string[] = [];
  if (hostname !== '*' && !hostname.includes('.')) errs.push('short names (non FQDN) are not allowed');
  const err = wildcardDomainError(hostname);
  // Gateways also accept an IP address as the host.
  if (err && !(isGateway && isIPAddress(hostname))) errs.push(err);
  const partial = partialWildcardError(hostname);
  if (partial) errs.push(partial);
  return errs;
}

/** `namespace/dnsName` hosts of Sidecars (required form) and Gateways (optional form). */
export function namespaceSlashHostErrors(hostname: string, isGateway: boolean): string[] {
  const slash = hostname.indexOf('/');
  if (slash < 0) {
    if (isGateway) return hostnamePartErrors(hostname, true);
    return ['host must be of form namespace/dnsName'];
  }
  const ns = hostname.slice(0, slash);
  const name = hostname.slice(slash + 1);
  const errs: string[] = [];
  if (ns.length === 0 || name.length === 0) errs.push('config namespace and dnsName in host entry cannot be empty');
  if (!isGateway) {
    const bare = ns.startsWith('~') ? ns.slice(1) : ns;
    if (bare !== '' && bare !== '*' && bare !== '.' && !isDNS1123Label(bare))
      errs.push(`invalid namespace value "${ns}" in sidecar`);
  } else if (ns !== '*' && ns !== '.' && !isDNS1123Label(ns)) {
    errs.push(`invalid namespace value "${ns}" in gateway`);
  }
  errs.push(...hostnamePartErrors(name, isGateway));
  return errs;
}

/** Kubernetes label syntax for keys and values; returns one message per bad entry. */
export function labelErrors(labels: Record<string, string>): string[] {
  const errs: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    const m = tagKeyRe.exec(k);
    if (!m) errs.push(`invalid tag key: "${k}"`);
    else if (m[1] && m[1].length - 1 > DNS_PREFIX_MAX_LENGTH)
      errs.push(`invalid tag key: "${k}" (DNS prefix is too long)`);
    // Group 2, the name, is not optional: the '' is never used.
    else if ((m[2] ?? '').length > DNS1123_LABEL_MAX_LENGTH) errs.push(`invalid tag key: "${k}" (name is too long)`);
    if (!labelValueRe.test(v)) errs.push(`invalid tag value: "${v}"`);
  }
  return errs;
}
