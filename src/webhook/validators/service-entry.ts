// ServiceEntry (networking.istio.io): external and VM services; in ambient, ztunnel gets them as
// Services with their addresses and endpoints.

import { ServiceEntry_Location, ServiceEntry_Resolution } from './common/enum-types';
import { eachMessage, enumOf, int, isObject, list, str, strList, strMap, UINT32 } from './common/fields';
import { checkExportTo } from './common/export-to';
import { fqdnError, isWildcarded, partialWildcardError, wildcardDomainError } from './common/hosts';
import { ipSubnetError, isIPAddress } from './common/net';
import { isHTTP, isTCP, isTLS, parseProtocol, portError, portNameError, protocolError } from './common/ports';
import { RepeatFinder } from './common/repeats';
import { at, idx } from './common/report';
import { checkAlphaWorkloadSelector } from './common/selectors';
import { checkWorkloadEntry } from './workload-entry';
import { labelErrors } from './common/hosts';
import type { SpecValidator } from './types';

/** istiod auto-allocates addresses (ambient needs them) unless the object opts out with this label. */
const AUTO_ALLOCATE_LABEL = 'networking.istio.io/enable-autoallocate-ip';
const USE_WAYPOINT_LABEL = 'istio.io/use-waypoint';

interface SEPort {
  name: string;
  number: number;
  protocol: string;
}

export const validateServiceEntry: SpecValidator = (r, spec, meta) => {
  // istiod stops at a bad selector.
  if (!checkAlphaWorkloadSelector(r, spec, 'service entry')) return;
  const endpointsRaw = list(r, spec['endpoints'], 'spec.endpoints');
  if (spec['workloadSelector'] != null && endpointsRaw)
    r.error('spec', 'only one of WorkloadSelector or Endpoints is allowed in Service Entry');
  const resolution = enumOf(r, spec['resolution'], 'spec.resolution', ServiceEntry_Resolution);
  const location = enumOf(r, spec['location'], 'spec.location', ServiceEntry_Location);
  const hosts = strList(r, spec['hosts'], 'spec.hosts') ?? [];
  if (hosts.length === 0) r.error('spec.hosts', 'service entry must have at least one host');
  hosts.forEach((h, i) => {
    const p = idx('spec.hosts', i);
    if (h === '*') {
      r.error(p, `invalid host ${h}`);
      return;
    }
    const err = wildcardDomainError(h);
    if (err) r.error(p, err);
    if (resolution !== 'DYNAMIC_DNS') {
      const partial = partialWildcardError(h);
      if (partial) r.warn(p, partial);
    }
  });
  const addresses = strList(r, spec['addresses'], 'spec.addresses') ?? [];
  addresses.forEach((a, i) => {
    const err = ipSubnetError(a);
    if (err) r.error(idx('spec.addresses', i), err);
  });
  if (addresses.some((a) => a.includes('/')) && resolution !== 'NONE' && resolution !== 'STATIC') {
    r.error('spec.addresses', 'CIDR addresses are allowed only for NONE/STATIC resolution types');
  }
  const autoAllocate = (meta.labels[AUTO_ALLOCATE_LABEL] ?? 'true').toLowerCase() !== 'false';
  const ports: SEPort[] = [];
  const names = new Set<string>();
  const repeatedNames = new RepeatFinder<string>();
  const repeatedNumbers = new RepeatFinder<number>();
  eachMessage(r, spec['ports'], 'spec.ports', 'service entry port may not be null', (port, p) => {
    const sp: SEPort = {
      name: str(r, port['name'], at(p, 'name')) ?? '',
      number: int(r, port['number'], at(p, 'number'), UINT32) ?? 0,
      protocol: str(r, port['protocol'], at(p, 'protocol')) ?? '',
    };
    ports.push(sp);
    if (repeatedNames.isNewRepeat(sp.name))
      r.error(at(p, 'name'), `service entry port name "${sp.name}" already defined`);
    names.add(sp.name);
    if (repeatedNumbers.isNewRepeat(sp.number))
      r.error(at(p, 'number'), `service entry port ${sp.number} already defined`);
    const target = int(r, port['targetPort'], at(p, 'targetPort'), UINT32) ?? 0;
    const targetProblem = target !== 0 && portError(target);
    if (targetProblem) r.error(at(p, 'targetPort'), targetProblem);
    if (addresses.length === 0 && !autoAllocate && (sp.protocol === '' || sp.protocol === 'TCP')) {
      r.warn(
        p,
        'addresses are required for ports serving TCP (or unset) protocol when IP Autoallocation is not enabled',
      );
    }
    for (const err of [portNameError(sp.name), protocolError(sp.protocol), portError(sp.number)])
      if (err) r.error(p, err);
  });

  const endpoints = (endpointsRaw ?? []).map((e, i) => ({ e, p: idx('spec.endpoints', i) }));
  switch (resolution) {
    case 'NONE':
      if (endpoints.length > 0) r.error('spec.endpoints', 'no endpoints should be provided for resolution type none');
      if (spec['workloadSelector'] != null)
        r.warn('spec.workloadSelector', 'workloadSelector should not be set when resolution mode is NONE');
      break;
    case 'STATIC':
      for (const { e, p } of endpoints) {
        if (!isObject(e)) r.error(p, 'endpoint cannot be nil');
        else checkWorkloadEntry(r, e, p, { servicePorts: names, allowFQDN: false });
      }
      break;
    case 'DNS':
    case 'DNS_ROUND_ROBIN':
      if (endpoints.length === 0) {
        const bad = hosts.map((h) => fqdnError(h)).find(Boolean);
        if (bad)
          r.error(
            'spec.hosts',
            `hosts must be FQDN or contain only prefix wildcards if no endpoints are provided for resolution mode ${resolution}, ${bad}`,
          );
      }
      if (resolution === 'DNS_ROUND_ROBIN' && endpoints.length > 1)
        r.error('spec.endpoints', `there must only be 0 or 1 endpoint for resolution mode ${resolution}`);
      for (const { e, p } of endpoints) {
        if (!isObject(e)) {
          r.error(p, 'endpoint cannot be nil');
          continue;
        }
        const address = str(r, e['address'], at(p, 'address')) ?? '';
        if (!isIPAddress(address) && fqdnError(address))
          r.error(at(p, 'address'), `endpoint address "${address}" is not a valid FQDN or an IP address`);
        for (const err of labelErrors(strMap(r, e['labels'], at(p, 'labels')) ?? {})) r.error(at(p, 'labels'), err);
        for (const [name, value] of Object.entries(isObject(e['ports']) ? e['ports'] : {})) {
          const pp = `${at(p, 'ports')}[${JSON.stringify(name)}]`;
          const n = int(r, value, pp, UINT32) ?? 0;
          if (!names.has(name)) r.error(pp, `endpoint port ${n} is not defined by the service entry`);
          for (const err of [portNameError(name), portError(n)]) if (err) r.error(pp, err);
        }
      }
      if (addresses.length > 0 && hosts.length > 1 && ports.some((p) => isTCP(parseProtocol(p.protocol)))) {
        r.warn(
          'spec.hosts',
          'service entry can not have more than one host specified simultaneously with address and tcp port',
        );
      }
      break;
    case 'DYNAMIC_DNS':
      hosts.forEach((h, i) => {
        if (!isWildcarded(h))
          r.error(idx('spec.hosts', i), `host must be wildcarded for resolution mode ${resolution}`);
      });
      if (addresses.length > 0)
        r.error(
          'spec.addresses',
          `addresses cannot be set for resolution type ${resolution}. HTTP route domains will only be generated from the hosts field values`,
        );
      if (endpoints.length > 0)
        r.error(
          'spec.endpoints',
          `endpoints cannot be set for resolution type ${resolution}. Destination IP address determined from hosts field values`,
        );
      ports.forEach((p, i) => {
        const proto = parseProtocol(p.protocol);
        if (proto !== 'HTTP' && proto !== 'TLS' && proto !== 'GRPC' && proto !== 'HTTP2') {
          r.error(
            idx('spec.ports', i),
            `only HTTP, TLS, GRPC, and HTTP2 protocols are supported for resolution type ${resolution}`,
          );
        }
      });
      if (location === 'MESH_INTERNAL') {
        const wp = meta.labels[USE_WAYPOINT_LABEL];
        if (wp !== undefined && wp !== '' && wp.toLowerCase() !== 'none') {
          r.error(
            'spec.location',
            `location MESH_INTERNAL with resolution type ${resolution} is not supported when using waypoints`,
          );
        }
      }
      break;
  }
  // Plain TCP cannot tell several hosts apart, unless the hosts are ignored (NONE).
  if (resolution !== 'NONE' && hosts.length > 1) {
    const i = ports.findIndex((p) => !isHTTP(parseProtocol(p.protocol)) && !isTLS(parseProtocol(p.protocol)));
    if (i >= 0) r.error(idx('spec.ports', i), 'multiple hosts provided with non-HTTP, non-TLS ports');
  }
  checkExportTo(r, meta.namespace, strList(r, spec['exportTo'], 'spec.exportTo'), 'spec.exportTo', {
    serviceEntry: true,
    destinationRuleWithSelector: false,
  });
};
