// VirtualService (networking.istio.io): routing for hosts, bound to the mesh or to gateways.

import { canonicalJson } from './common/canonical-json';
import { checkExportTo } from './common/export-to';
import { eachMessage, isObject, JsonObject, list, obj, strList } from './common/fields';
import { lowestOverlapping, subsetOfSome } from './common/host-sets';
import { wildcardDomainError } from './common/hosts';
import { ipSubnetError, isIPAddress } from './common/net';
import { at, idx, Report } from './common/report';
import { HEADER_MATCH_FIELDS, checkHTTPRoute, checkMatchOrigin, checkWeightedDestinations } from './http-route';
import { checkGatewayNames, isJwtClaimRoute } from './route-fields';
import type { SpecValidator } from './types';

const MESH_GATEWAY = 'mesh';
const OUTBOUND_SNI = /^outbound_\.(\d[^_]*)_\._\.(.+)$/;

/** Hosts of a gateway-bound VirtualService may also be istiod's auto-generated SNI names. */
function gatewayHostError(sni: boolean, host: string): string | undefined {
  if (sni && host.startsWith('outbound_')) {
    if (host.length > 255) return `domain name "${host}" too long (max 255)`;
    const m = OUTBOUND_SNI.exec(host);
    // Group 2 is not optional: the '' is never used.
    if (!m || !/[a-zA-Z]/.test(m[2] ?? ''))
      return `domain name "${host}" invalid. should follow outbound_.<PORT>_._.<HOSTNAME> format`;
    return undefined;
  }
  return wildcardDomainError(host);
}

function checkL4Match(r: Report, m: JsonObject, path: string): void {
  strList(r, m['destinationSubnets'], at(path, 'destinationSubnets'))?.forEach((s, i) => {
    const err = ipSubnetError(s);
    if (err) r.error(idx(at(path, 'destinationSubnets'), i), err);
  });
  checkMatchOrigin(r, m, path);
}

/**
 * Checks SNI hosts against the VirtualService's hosts. Whether each distinct SNI value is a
 * subset of some host is answered for all of them at once (see host-sets), and a value that is
 * not is reported once, however often it repeats; the host list in that message is built once.
 */
class SniChecker {
  private readonly covered = new Map<string, boolean>();
  private readonly reported = new Set<string>();
  private hostList: string | undefined;

  constructor(
    private readonly hosts: string[],
    private readonly meshBound: boolean,
    tls: unknown[] | undefined,
  ) {
    const snis = new Set<string>();
    for (const t of tls ?? []) {
      const matches = isObject(t) && Array.isArray(t['match']) ? t['match'] : [];
      for (const m of matches)
        if (isObject(m) && Array.isArray(m['sniHosts']))
          for (const s of m['sniHosts']) if (typeof s === 'string') snis.add(s);
    }
    const values = [...snis];
    const covered = subsetOfSome(values, hosts);
    values.forEach((v, i) => this.covered.set(v, covered[i] ?? false));
  }

  check(r: Report, sni: string, path: string): void {
    const err = this.meshBound ? wildcardDomainError(sni) : gatewayHostError(true, sni);
    if (err) {
      if (isIPAddress(sni))
        r.warn(path, `using an IP address ("${sni}") goes against SNI spec and most clients do not support this`);
      else r.error(path, err);
      return;
    }
    if (this.covered.get(sni) || this.reported.has(sni)) return;
    this.reported.add(sni);
    this.hostList ??= `[${this.hosts.join(', ')}]`;
    r.error(path, `SNI host "${sni}" is not a compatible subset of any of the virtual service hosts: ${this.hostList}`);
  }
}

/**
 * Hosts that overlap an earlier host, each named with the earliest one it overlaps; a value is
 * reported once however often it repeats. istiod compares every pair, which for 10,000 hosts is
 * 50 million comparisons and as many messages.
 */
function checkDuplicateHosts(r: Report, hosts: string[]): void {
  const reported = new Set<string>();
  const lowest = lowestOverlapping(hosts);
  hosts.forEach((host, i) => {
    const earlier = lowest[i] ?? -1; // -1: overlaps no other host
    if (earlier < 0 || earlier > i || reported.has(host)) return;
    reported.add(host);
    r.error('spec.hosts', `duplicate hosts in virtual service: ${hosts[earlier]} & ${host}`);
  });
}

/** Rules after a match-all rule, and matches repeated from earlier rules, never apply. */
function warnUnreachable(r: Report, routes: unknown[] | undefined, path: string): void {
  if (!routes) return;
  const seen = new Map<string, number>();
  let catchAll = -1;
  routes.forEach((route, i) => {
    if (!isObject(route)) return;
    const name = typeof route['name'] === 'string' && route['name'] ? JSON.stringify(route['name']) : `#${i}`;
    const matches = Array.isArray(route['match']) ? route['match'] : [];
    if (matches.length === 0) {
      if (catchAll >= 0)
        r.warn(idx(path, i), `virtualService rule ${name} not used (only the last rule can have no matches)`);
      catchAll = i;
      return;
    }
    let duplicates = 0;
    matches.forEach((m, j) => {
      if (catchAll >= 0) {
        r.warn(idx(path, i), `virtualService rule ${name} not used (route without matches defined before)`);
        return;
      }
      const match = isObject(m) ? m : {};
      const matchName = match['name'];
      // The match's text without its name: two matches differing only in name overlap.
      const keyText = canonicalJson(match, 'name');
      const prior = seen.get(keyText);
      if (prior !== undefined) {
        const label = typeof matchName === 'string' && matchName ? JSON.stringify(matchName) : `#${j}`;
        r.warn(
          idx(path, i),
          `virtualService rule ${name} match ${label} is not used (duplicate/overlapping match in rule #${prior})`,
        );
        duplicates++;
      } else seen.set(keyText, i);
    });
    if (duplicates === matches.length)
      r.warn(idx(path, i), `virtualService rule ${name} not used (all matches used by prior rules)`);
  });
}

export const validateVirtualService: SpecValidator = (r, spec, meta) => {
  const hosts = strList(r, spec['hosts'], 'spec.hosts') ?? [];
  const gateways = strList(r, spec['gateways'], 'spec.gateways') ?? [];
  const http = list(r, spec['http'], 'spec.http');
  const tls = list(r, spec['tls'], 'spec.tls');
  const tcp = list(r, spec['tcp'], 'spec.tcp');
  const delegate = hosts.length === 0;
  if (delegate) {
    if (gateways.length) r.error('spec.gateways', 'delegate virtual service must have no gateways specified');
    if (tls) r.error('spec.tls', 'delegate virtual service must have no tls route specified');
    if (tcp) r.error('spec.tcp', 'delegate virtual service must have no tcp route specified');
  }
  let appliesToMesh = true;
  let appliesToGateway = false;
  if (gateways.length > 0) {
    checkGatewayNames(r, gateways, 'spec.gateways');
    appliesToGateway = !gateways.includes(MESH_GATEWAY);
    appliesToMesh = !appliesToGateway;
  }
  if (!appliesToGateway) {
    http?.forEach((route, i) => {
      const matches = isObject(route) && Array.isArray(route['match']) ? route['match'] : [];
      matches.forEach((m, j) => {
        for (const field of HEADER_MATCH_FIELDS) {
          const headers = isObject(m) && isObject(m[field]) ? Object.keys(m[field]) : [];
          for (const h of headers.filter(isJwtClaimRoute)) {
            r.error(
              at(idx(at(idx('spec.http', i), 'match'), j), field),
              `JWT claim based routing (key: ${h}) is only supported for gateway, found no gateways: [${gateways.join(' ')}]`,
            );
          }
        }
      });
    });
  }
  const sni = (tls ?? []).some(
    (t) =>
      isObject(t) &&
      Array.isArray(t['match']) &&
      t['match'].some((m) => isObject(m) && Array.isArray(m['sniHosts']) && m['sniHosts'].length > 0),
  );
  let allHostsValid = true;
  for (const [i, h] of hosts.entries()) {
    const err = appliesToGateway ? gatewayHostError(sni, h) : wildcardDomainError(h);
    if (err) {
      if (!isIPAddress(h)) {
        r.error(idx('spec.hosts', i), err);
        allHostsValid = false;
      }
    } else if (appliesToMesh && h === '*') {
      r.error(idx('spec.hosts', i), 'wildcard host * is not allowed for virtual services bound to the mesh gateway');
      allHostsValid = false;
    }
  }
  if (allHostsValid) checkDuplicateHosts(r, hosts);
  if (!http && !tcp && !tls) r.error('spec', 'http, tcp or tls must be provided in virtual service');
  http?.forEach((route, i) => {
    const p = idx('spec.http', i);
    const o = obj(r, route, p);
    if (!o) {
      r.error(p, 'http route may not be null');
      return;
    }
    checkHTTPRoute(r, o, p, delegate);
  });
  // Only TLS routes have SNI hosts to check.
  const sniChecker = tls ? new SniChecker(hosts, gateways.includes(MESH_GATEWAY), tls) : undefined;
  tls?.forEach((route, i) => {
    const p = idx('spec.tls', i);
    const o = obj(r, route, p);
    if (!o) return;
    const matches = list(r, o['match'], at(p, 'match'));
    if (!matches) r.error(at(p, 'match'), 'TLS route must have at least one match condition');
    matches?.forEach((m, j) => {
      const mp = idx(at(p, 'match'), j);
      const match = obj(r, m, mp);
      if (!match) {
        r.error(mp, 'TLS match may not be null');
        return;
      }
      const sniHosts = strList(r, match['sniHosts'], at(mp, 'sniHosts'));
      if (!sniHosts) r.error(at(mp, 'sniHosts'), 'TLS match must have at least one SNI host');
      sniHosts?.forEach((s, k) => sniChecker?.check(r, s, idx(at(mp, 'sniHosts'), k)));
      checkL4Match(r, match, mp);
    });
    const routes = list(r, o['route'], at(p, 'route'));
    if (!routes) r.error(at(p, 'route'), 'TLS route is required');
    checkWeightedDestinations(r, routes, at(p, 'route'), false);
  });
  tcp?.forEach((route, i) => {
    const p = idx('spec.tcp', i);
    const o = obj(r, route, p);
    if (!o) return;
    eachMessage(r, o['match'], at(p, 'match'), 'tcp match may not be nil', (match, mp) => {
      checkL4Match(r, match, mp);
    });
    const routes = list(r, o['route'], at(p, 'route'));
    if (!routes) r.error(at(p, 'route'), 'TCP route is required');
    checkWeightedDestinations(r, routes, at(p, 'route'), false);
  });
  checkExportTo(r, meta.namespace, strList(r, spec['exportTo'], 'spec.exportTo'), 'spec.exportTo', {
    serviceEntry: false,
    destinationRuleWithSelector: false,
  });
  warnUnreachable(r, http, 'spec.http');
  warnUnreachable(r, tcp, 'spec.tcp');
  warnUnreachable(r, tls, 'spec.tls');
};
