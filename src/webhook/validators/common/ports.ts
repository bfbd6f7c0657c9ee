// Port numbers, port names and protocol names as istiod reads them (pkg/config/protocol).

import { isDNS1123Label } from './hosts';

export const MIN_PORT = 1;
export const MAX_PORT = 65535;

export function portError(port: number): string | undefined {
  return port >= MIN_PORT && port <= MAX_PORT
    ? undefined
    : `port number ${port} must be in the range ${MIN_PORT}..${MAX_PORT}`;
}

export function portNameError(name: string): string | undefined {
  return isDNS1123Label(name) ? undefined : `invalid port name: ${name}`;
}

export type Protocol =
  | 'TCP'
  | 'UDP'
  | 'GRPC'
  | 'GRPC-Web'
  | 'HTTP'
  | 'HTTP_PROXY'
  | 'HTTP2'
  | 'HTTPS'
  | 'TLS'
  | 'Mongo'
  | 'Redis'
  | 'MySQL'
  | 'Unsupported';

const PROTOCOLS: Record<string, Protocol> = {
  tcp: 'TCP',
  udp: 'UDP',
  grpc: 'GRPC',
  'grpc-web': 'GRPC-Web',
  http: 'HTTP',
  http_proxy: 'HTTP_PROXY',
  http2: 'HTTP2',
  https: 'HTTPS',
  tls: 'TLS',
  mongo: 'Mongo',
  redis: 'Redis',
  mysql: 'MySQL',
};

/** Case-insensitive, like istiod's protocol.Parse; anything else is Unsupported (used for sniffing). */
export function parseProtocol(text: string): Protocol {
  return PROTOCOLS[text.toLowerCase()] ?? 'Unsupported';
}

export function isHTTP(p: Protocol): boolean {
  return p === 'HTTP' || p === 'HTTP2' || p === 'HTTP_PROXY' || p === 'GRPC' || p === 'GRPC-Web';
}

export function isTLS(p: Protocol): boolean {
  return p === 'HTTPS' || p === 'TLS';
}

export function isTCP(p: Protocol): boolean {
  return p === 'TCP' || p === 'HTTPS' || p === 'TLS' || p === 'Mongo' || p === 'Redis' || p === 'MySQL';
}

/** An empty protocol means "sniff"; any other value must be known. */
export function protocolError(text: string): string | undefined {
  return text !== '' && parseProtocol(text) === 'Unsupported' ? `unsupported protocol: ${text}` : undefined;
}
