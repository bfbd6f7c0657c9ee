// Gateway (networking.istio.io): servers of an ingress or egress gateway (and of waypoints'
// internal representation).

import { int, isObject, JsonObject, list, obj, str, strList, UINT32 } from './common/fields';
import { isDNS1123Label, namespaceSlashHostErrors } from './common/hosts';
import { isIPAddress, UNIX_ADDRESS_PREFIX, unixAddressError } from './common/net';
import { isHTTP, isTLS, parseProtocol, portError } from './common/ports';
import { RepeatFinder } from './common/repeats';
import { at, idx, Report } from './common/report';
import { checkServerTLS } from './common/server-tls';
import type { SpecValidator } from './types';

function checkServer(r: Report, server: JsonObject, path: string): void {
  const hosts = strList(r, server['hosts'], at(path, 'hosts'));
  if (!hosts) r.error(at(path, 'hosts'), 'server config must contain at least one host');
  hosts?.forEach((h, i) => {
    for (const err of namespaceSlashHostErrors(h, true)) r.error(idx(at(path, 'hosts'), i), err);
  });
  const bind = str(r, server['bind'], at(path, 'bind')) ?? '';
  const port = obj(r, server['port'], at(path, 'port'));
  const tls = obj(r, server['tls'], at(path, 'tls'));
  const portPath = at(path, 'port');
  let portOk = false;
  if (!port) r.error(portPath, 'port is required');
  else {
    const before = r.errorCount;
    const protocol = str(r, port['protocol'], at(portPath, 'protocol')) ?? '';
    const number = int(r, port['number'], at(portPath, 'number'), UINT32) ?? 0;
    const targetPort = int(r, port['targetPort'], at(portPath, 'targetPort'), UINT32) ?? 0;
    const name = str(r, port['name'], at(portPath, 'name')) ?? '';
    if (parseProtocol(protocol) === 'Unsupported') {
      r.error(
        at(portPath, 'protocol'),
        `invalid protocol "${protocol}", supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP`,
      );
    }
    if (number > 0 || !bind.startsWith(UNIX_ADDRESS_PREFIX)) {
      const err = portError(number);
      if (err) r.error(at(portPath, 'number'), err);
    }
    if (targetPort > 0) r.error(at(portPath, 'targetPort'), 'targetPort has no impact on Gateways');
    if (name === '') r.error(at(portPath, 'name'), 'port name must be set');
    portOk = r.errorCount === before;
    if (bind.startsWith(UNIX_ADDRESS_PREFIX)) {
      const err = unixAddressError(bind.slice(UNIX_ADDRESS_PREFIX.length));
      if (err) r.error(at(path, 'bind'), err);
      if (number !== 0) r.error(at(portPath, 'number'), 'port number must be 0 for unix domain socket');
    }
  }
  if (bind !== '' && !bind.startsWith(UNIX_ADDRESS_PREFIX) && !isIPAddress(bind))
    r.error(at(path, 'bind'), `${bind} is not a valid IP`);
  if (tls) checkServerTLS(r, tls, at(path, 'tls'));
  if (portOk && port) {
    const p = parseProtocol(typeof port['protocol'] === 'string' ? port['protocol'] : '');
    if (isTLS(p) && !tls) r.error(at(path, 'tls'), 'server must have TLS settings for HTTPS/TLS protocols');
    else if (!isTLS(p) && tls) {
      if (isHTTP(p)) {
        // A plain HTTP server may only carry passthrough settings such as httpsRedirect; the
        // unset mode is PASSTHROUGH (the enum's zero value).
        const mode = tls['mode'] ?? 'PASSTHROUGH';
        const passThrough = mode === 'PASSTHROUGH' || mode === 'AUTO_PASSTHROUGH' || mode === 0 || mode === 3;
        if (!passThrough || tls['caCertificates'] || tls['privateKey'] || tls['serverCertificate']) {
          r.error(at(path, 'tls'), 'server cannot have TLS settings for plain text HTTP ports');
        }
      } else r.error(at(path, 'tls'), 'server cannot have TLS settings for non HTTPS/TLS ports');
    }
  }
}

export const validateGateway: SpecValidator = (r, spec, meta) => {
  if (!isDNS1123Label(meta.name)) r.error('metadata.name', `invalid gateway name: "${meta.name}"`);
  const servers = list(r, spec['servers'], 'spec.servers');
  if (!servers) {
    r.error('spec.servers', 'gateway must have at least one server');
    return;
  }
  const portNames = new RepeatFinder<string>();
  servers.forEach((s, i) => {
    const p = idx('spec.servers', i);
    if (!isObject(s)) {
      if (s === null) r.error(p, 'server may not be nil');
      else obj(r, s, p);
      return;
    }
    checkServer(r, s, p);
    const port = isObject(s['port']) ? s['port'] : undefined;
    if (port) {
      const name = typeof port['name'] === 'string' ? port['name'] : '';
      if (portNames.isNewRepeat(name))
        r.error(at(p, 'port.name'), `port names in servers must be unique: duplicate name ${name}`);
      const proto = parseProtocol(typeof port['protocol'] === 'string' ? port['protocol'] : '');
      if (!isHTTP(proto) && isObject(s['tls']) && s['tls']['httpsRedirect'] === true) {
        r.warn(at(p, 'tls.httpsRedirect'), 'tls.httpsRedirect should only be used with http servers');
      }
    }
  });
};
