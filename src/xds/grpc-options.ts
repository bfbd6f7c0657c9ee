// The grpc-js server options xDS needs, applied by whoever constructs the grpc.Server(s).

import type { ChannelOptions } from '@grpc/grpc-js';
import type { ServeOptions } from '../config/options';

/** Time a connection past its max age gets to finish its streams before it is closed. */
export const MAX_CONNECTION_AGE_GRACE_MS = 10_000;

/**
 * keepaliveMaxServerConnectionAge closes connections (grpc-js adds ±10 % jitter) so ztunnels
 * rebalance across replicas; ISTIO_GPRC_MAXSTREAMS and ISTIO_GPRC_MAXRECVMSGSIZE bound each
 * connection. grpc-js does not police client pings, so ztunnel's 30 s pings (and istiod's 15 s
 * minimum) are always accepted.
 */
export function xdsGrpcServerOptions(options: ServeOptions): ChannelOptions {
  return {
    'grpc.max_connection_age_ms': options.flags.keepaliveMaxServerConnectionAge,
    'grpc.max_connection_age_grace_ms': MAX_CONNECTION_AGE_GRACE_MS,
    'grpc.max_concurrent_streams': options.env.ISTIO_GPRC_MAXSTREAMS,
    'grpc.max_receive_message_length': options.env.ISTIO_GPRC_MAXRECVMSGSIZE,
  };
}
