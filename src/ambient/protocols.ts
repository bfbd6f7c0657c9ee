// Port protocol -> AppProtocol, as istiod's ConvertProtocol then toAppProtocolFromProtocol.

import { AppProtocol } from './messages';

/** Kubernetes' well-known appProtocol values that name an Istio protocol. */
const KUBERNETES_APP_PROTOCOLS: Record<string, string> = {
  'kubernetes.io/h2c': 'http2',
  'kubernetes.io/ws': 'http',
  'kubernetes.io/wss': 'https',
};

function fromIstioProtocol(protocol: string): AppProtocol {
  switch (protocol.toLowerCase()) {
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

/** A Kubernetes Service port: UDP/SCTP are never an app protocol; appProtocol beats the name prefix. */
export function kubePortAppProtocol(port: { name?: string; protocol?: string; appProtocol?: string }): AppProtocol {
  const transport = (port.protocol ?? 'TCP').toUpperCase();
  if (transport !== 'TCP') return AppProtocol.UNKNOWN;
  if (port.appProtocol) return fromIstioProtocol(KUBERNETES_APP_PROTOCOLS[port.appProtocol] ?? port.appProtocol);
  const name = port.name ?? '';
  const dash = name.indexOf('-');
  return fromIstioProtocol(dash >= 0 ? name.slice(0, dash) : name);
}

/** A ServiceEntry port's `protocol` string. */
export function serviceEntryAppProtocol(protocol: string | undefined): AppProtocol {
  return fromIstioProtocol(protocol ?? '');
}
