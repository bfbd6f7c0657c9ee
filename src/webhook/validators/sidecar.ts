// Sidecar (networking.istio.io): the listeners and visible hosts of sidecar proxies.

import { CaptureMode, OutboundTrafficPolicy_Mode, ServerTLSSettings_TLSmode } from './common/enum-types';
import { eachListedMessage, enumOf, int, isObject, JsonObject, list, obj, str, strList, UINT32 } from './common/fields';
import { fqdnError, namespaceSlashHostErrors } from './common/hosts';
import { isIPAddress, UNIX_ADDRESS_PREFIX, unixAddressError } from './common/net';
import { isHTTP, isTLS, parseProtocol, portError, portNameError, protocolError } from './common/ports';
import { RepeatFinder } from './common/repeats';
import { at, idx, Report } from './common/report';
import { checkAlphaWorkloadSelector } from './common/selectors';
import { checkServerTLS } from './common/server-tls';
import { checkConnectionPool } from './traffic-policy';
import type { SpecValidator } from './types';

/** MeshConfig's ALLOW_ANY_DYNAMIC_DNS by number: not a Sidecar mode name, so only a number reaches the check. */
const MESH_ALLOW_ANY_DYNAMIC_DNS = 3;
const LOOPBACK_OR_ANY = ['127.0.0.1', '0.0.0.0', '::1', '::'];

interface SidecarPort {
  number: number;
  protocol: string;
  name: string;
}

function readPort(r: Report, p: JsonObject, path: string): SidecarPort {
  if ((int(r, p['targetPort'], at(path, 'targetPort'), UINT32) ?? 0) > 0)
    r.error(at(path, 'targetPort'), 'targetPort has no impact on Sidecars');
  return {
    number: int(r, p['number'], at(path, 'number'), UINT32) ?? 0,
    protocol: str(r, p['protocol'], at(path, 'protocol')) ?? '',
    name: str(r, p['name'], at(path, 'name')) ?? '',
  };
}

function report(r: Report, path: string, ...errs: (string | undefined)[]): void {
  for (const e of errs) if (e) r.error(path, e);
}

/** host:port split as Go's net.SplitHostPort does it for the forms a defaultEndpoint may take. */
function splitHostPort(text: string): { host: string; port: string } | undefined {
  if (text.startsWith('[')) {
    const m = /^\[([^\]]*)\]:([^:]*)$/.exec(text);
    // Neither group is optional: the '' are never used.
    return m ? { host: m[1] ?? '', port: m[2] ?? '' } : undefined;
  }
  const colon = text.lastIndexOf(':');
  if (colon < 0 || text.slice(0, colon).includes(':')) return undefined;
  return { host: text.slice(0, colon), port: text.slice(colon + 1) };
}

function checkIngress(r: Report, ing: JsonObject, path: string, seenPorts: RepeatFinder<number>): void {
  const rawPort = obj(r, ing['port'], at(path, 'port'));
  if (!rawPort) {
    r.error(at(path, 'port'), 'sidecar: port is required for ingress listeners');
    return;
  }
  const port = readPort(r, rawPort, at(path, 'port'));
  const bind = str(r, ing['bind'], at(path, 'bind')) ?? '';
  if (port.name) report(r, at(path, 'port.name'), portNameError(port.name));
  report(r, at(path, 'port'), protocolError(port.protocol), portError(port.number));
  if (bind && !isIPAddress(bind)) r.error(at(path, 'bind'), `${bind} is not a valid IP`);
  if (seenPorts.isNewRepeat(port.number))
    r.error(at(path, 'port.number'), 'sidecar: ports on IP bound listeners must be unique');
  const endpoint = str(r, ing['defaultEndpoint'], at(path, 'defaultEndpoint')) ?? '';
  if (endpoint) {
    const ep = at(path, 'defaultEndpoint');
    if (endpoint.startsWith(UNIX_ADDRESS_PREFIX))
      report(r, ep, unixAddressError(endpoint.slice(UNIX_ADDRESS_PREFIX.length)));
    else {
      const hp = splitHostPort(endpoint);
      if (!hp) r.error(ep, `address ${endpoint}: missing port in address`);
      const host = hp?.host ?? '';
      if (host !== '' && !LOOPBACK_OR_ANY.includes(host)) {
        r.error(
          ep,
          'sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset',
        );
      }
      const portText = hp?.port ?? '';
      if (!/^[+-]?\d+$/.test(portText)) r.error(ep, `sidecar: defaultEndpoint port (${portText}) is not a number`);
      else report(r, ep, portError(Number(portText)));
    }
  }
  const tls = obj(r, ing['tls'], at(path, 'tls'));
  if (tls) {
    const tp = at(path, 'tls');
    if (list(r, tls['subjectAltNames'], at(tp, 'subjectAltNames')))
      r.error(at(tp, 'subjectAltNames'), 'sidecar: subjectAltNames is not supported in ingress tls');
    if (tls['httpsRedirect'] === true) r.error(at(tp, 'httpsRedirect'), 'sidecar: httpsRedirect is not supported');
    if (tls['credentialName']) r.error(at(tp, 'credentialName'), 'sidecar: credentialName is not currently supported');
    if (list(r, tls['credentialNames'], at(tp, 'credentialNames')))
      r.error(at(tp, 'credentialNames'), 'sidecar: credentialNames is not currently supported');
    if (list(r, tls['tlsCertificates'], at(tp, 'tlsCertificates')))
      r.error(at(tp, 'tlsCertificates'), 'sidecar: tls_certificates is not currently supported');
    const mode = enumOf(new Report(), tls['mode'], '', ServerTLSSettings_TLSmode);
    if (mode === 'ISTIO_MUTUAL' || mode === 'AUTO_PASSTHROUGH')
      r.error(at(tp, 'mode'), `cannot set mode to ${mode} in sidecar ingress tls`);
    if (!isTLS(parseProtocol(port.protocol))) r.error(tp, 'server cannot have TLS settings for non HTTPS/TLS ports');
    checkServerTLS(r, tls, tp);
  }
  checkConnectionPool(r, ing['connectionPool'], at(path, 'connectionPool'));
  if (
    isObject(ing['connectionPool']) &&
    ing['connectionPool']['http'] != null &&
    !isHTTP(parseProtocol(port.protocol))
  ) {
    r.warn(
      at(path, 'connectionPool.http'),
      `sidecar: HTTP connection pool settings are configured for port ${port.number} ("${port.name}") but its protocol is not HTTP (${port.protocol}); only TCP settings will apply`,
    );
  }
}

function checkEgressPort(r: Report, raw: JsonObject, eg: JsonObject, path: string): SidecarPort {
  const port = readPort(r, raw, at(path, 'port'));
  const bind = str(r, eg['bind'], at(path, 'bind')) ?? '';
  const capture = enumOf(r, eg['captureMode'], at(path, 'captureMode'), CaptureMode);
  if (port.name) report(r, at(path, 'port.name'), portNameError(port.name));
  report(r, at(path, 'port.protocol'), protocolError(port.protocol));
  if (port.number === 0) {
    if (!bind.startsWith(UNIX_ADDRESS_PREFIX))
      r.error(at(path, 'bind'), 'sidecar: ports with 0 value must have a unix domain socket bind address');
    else report(r, at(path, 'bind'), unixAddressError(bind.slice(UNIX_ADDRESS_PREFIX.length)));
    if (capture !== 'DEFAULT' && capture !== 'NONE')
      r.error(at(path, 'captureMode'), 'sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners');
  } else {
    report(r, at(path, 'port.number'), portError(port.number));
    if (bind && !isIPAddress(bind)) r.error(at(path, 'bind'), `${bind} is not a valid IP`);
  }
  return port;
}

function checkEgressHosts(r: Report, hosts: string[], path: string, namespace: string): void {
  const byNs = new Map<string, Set<string>>();
  hosts.forEach((h, i) => {
    const hp = idx(path, i);
    const slash = h.indexOf('/');
    if (slash >= 0 && !h.startsWith('~')) {
      const ns = h.slice(0, slash) === '.' ? namespace : h.slice(0, slash);
      const svc = h.slice(slash + 1);
      const seen = byNs.get(ns) ?? new Set<string>();
      byNs.set(ns, seen);
      if (svc !== '*' ? seen.has(svc) || seen.has('*') : seen.size > 0) r.warn(hp, `duplicated egress host: ${h}`);
      seen.add(svc);
    }
    for (const err of namespaceSlashHostErrors(h, false)) r.error(hp, err);
  });
  if (byNs.get('*')?.has('*') && byNs.size !== 1)
    r.warn(path, '`*/*` host select all resources, no other hosts can be added');
}

function checkOutboundPolicy(r: Report, v: unknown, path: string): void {
  const tp = obj(r, v, path);
  if (!tp) return;
  if (tp['mode'] === MESH_ALLOW_ANY_DYNAMIC_DNS) {
    r.error(
      at(path, 'mode'),
      'sidecar: ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig, not in Sidecar resource',
    );
    return;
  }
  const mode = enumOf(r, tp['mode'], at(path, 'mode'), OutboundTrafficPolicy_Mode);
  const proxy = obj(r, tp['egressProxy'], at(path, 'egressProxy'));
  if (!proxy) return;
  if (mode !== 'ALLOW_ANY') {
    r.error(
      at(path, 'egressProxy'),
      'sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode',
    );
    return;
  }
  const host = str(r, proxy['host'], at(path, 'egressProxy.host')) ?? '';
  report(r, at(path, 'egressProxy.host'), fqdnError(host));
  if (proxy['port'] == null) r.error(at(path, 'egressProxy.port'), 'sidecar: egress_proxy port must be non-nil');
}

export const validateSidecar: SpecValidator = (r, spec, meta) => {
  if (!checkAlphaWorkloadSelector(r, spec, 'sidecar')) return;
  const ingress = list(r, spec['ingress'], 'spec.ingress');
  const egress = list(r, spec['egress'], 'spec.egress');
  if (!ingress && !egress && spec['outboundTrafficPolicy'] == null && spec['inboundConnectionPool'] == null) {
    r.error('spec', 'sidecar: empty configuration provided');
    return;
  }
  const ingressPorts = new RepeatFinder<number>();
  eachListedMessage(r, ingress, 'spec.ingress', 'sidecar: ingress may not be null', (ing, p) => {
    checkIngress(r, ing, p, ingressPorts);
  });
  checkConnectionPool(r, spec['inboundConnectionPool'], 'spec.inboundConnectionPool');
  const egressPorts = new RepeatFinder<number>();
  const sockets = new RepeatFinder<string>();
  let catchAll = false;
  egress?.forEach((eg, i) => {
    const p = idx('spec.egress', i);
    if (!isObject(eg)) {
      if (eg === null) r.error(p, 'egress listener may not be null');
      else obj(r, eg, p);
      return;
    }
    const rawPort = obj(r, eg['port'], at(p, 'port'));
    if (!rawPort) {
      if (catchAll) {
        r.error(at(p, 'port'), 'sidecar: egress can have only one listener with empty port');
        return;
      }
      if (i === egress.length - 1) catchAll = true;
      else
        r.error(at(p, 'port'), 'sidecar: the egress listener with empty port should be the last listener in the list');
    } else {
      const port = checkEgressPort(r, rawPort, eg, p);
      const bind = typeof eg['bind'] === 'string' ? eg['bind'] : '';
      if (port.number === 0) {
        if (sockets.isNewRepeat(bind))
          r.error(at(p, 'bind'), 'sidecar: unix domain socket values for listeners must be unique');
      } else {
        if (egressPorts.isNewRepeat(port.number))
          r.error(at(p, 'port.number'), 'sidecar: ports on IP bound listeners must be unique');
      }
    }
    const hosts = strList(r, eg['hosts'], at(p, 'hosts'));
    if (!hosts) r.error(at(p, 'hosts'), 'sidecar: egress listener must contain at least one host');
    else checkEgressHosts(r, hosts, at(p, 'hosts'), meta.namespace);
  });
  checkOutboundPolicy(r, spec['outboundTrafficPolicy'], 'spec.outboundTrafficPolicy');
};
