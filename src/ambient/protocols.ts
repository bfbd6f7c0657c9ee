// Port protocol -> AppProtocol, as istiod's ConvertProtocol then toAppProtocolFromProtocol.

import { AppProtocol } from './messages';

/** Kubernetes' well-known appProtocol values that name an Istio protocol. */
const KUBERNETES_APP_PROTOCOLS: Record<string, string> = {
  'kubernetes.io/h2c': 'http2',
  'kubernetes.io/ws': 'http',
  'kubernetes.io/wss': 'https',
};

/**
 * Ports istiod treats as TCP when the port name (or appProtocol) names no protocol: SMTP, DNS,
 * MySQL and MongoDB, whose server-speaks-first protocols break under protocol sniffing.
 */
export const WELL_KNOWN_TCP_PORTS: ReadonlySet<number> = new Set([25, 53, 3306, 27017]);

/** Protocol names istiod parses (case-insensitively); anything else is unsupported. */
const ISTIO_PROTOCOLS: ReadonlySet<string> = new Set([
  'tcp',
  'udp',
  'grpc',
  'grpc-web',
  'http',
  'http_proxy',
  'http2',
  'https',
  'tls',
  'mongo',
  'redis',
  'mysql',
]);

/** The ztunnel app protocol of an Istio protocol; known protocols without one are UNKNOWN too. */
function fromIstioProtocol(protocol: string): AppProtocol {
  switch (protocol) {
    case 'http':
      return AppProtocol.HTTP11;
    case 'http2':
      return AppProtocol.HTTP2;
    case 'grpc':
      return AppProtocol.GRPC;
    case 'https':
    case 'tls':
      return AppProtocol.TLS;
    case 'tcp':
      return AppProtocol.TCP;
    default:
      return AppProtocol.UNKNOWN;
  }
}

/**
 * A Kubernetes Service port: UDP is never an app protocol; appProtocol beats the name; a name
 * starting with grpc-web is grpc-web, else the part before the first dash is the protocol; an
 * unsupported one on a well-known port is TCP.
 */
export function kubePortAppProtocol(port: {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
}): AppProtocol {
  if ((port.protocol ?? 'TCP').toUpperCase() === 'UDP') return AppProtocol.UNKNOWN;
  const name = port.appProtocol ? (KUBERNETES_APP_PROTOCOLS[port.appProtocol] ?? port.appProtocol) : (port.name ?? '');
  const lower = name.toLowerCase();
  if (lower.startsWith('grpc-web')) return AppProtocol.UNKNOWN;
  const dash = lower.indexOf('-');
  const prefix = dash >= 0 ? lower.slice(0, dash) : lower;
  if (!ISTIO_PROTOCOLS.has(prefix))
    return port.port !== undefined && WELL_KNOWN_TCP_PORTS.has(port.port) ? AppProtocol.TCP : AppProtocol.UNKNOWN;
  return fromIstioProtocol(prefix);
}

/** A ServiceEntry port's `protocol` string, parsed whole (no prefix, no well-known ports). */
export function serviceEntryAppProtocol(protocol: string | undefined): AppProtocol {
  return fromIstioProtocol((protocol ?? '').toLowerCase());
}
