// grpc-js server options shared by both gRPC listeners, from istiod's flags and env vars.

import type * as grpc from '@grpc/grpc-js';
import type { ServeOptions } from '../config/options';

/**
 * ztunnel pings every 10–20 s; istiod's enforcement policy allows pings this often. grpc-js 1.14
 * does not police client pings at all, so these options only state the contract should it start to.
 */
export const MIN_CLIENT_PING_INTERVAL_MS = 15_000;
/** Time given to streams after the max age is reached before the connection is cut. */
export const CONNECTION_AGE_GRACE_MS = 10_000;

export function grpcServerOptions(options: ServeOptions): grpc.ServerOptions {
  return {
    // grpc-js spreads the age by ±10% itself, so replicas' clients do not all reconnect at once.
    'grpc.max_connection_age_ms': options.flags.keepaliveMaxServerConnectionAge,
    'grpc.max_connection_age_grace_ms': CONNECTION_AGE_GRACE_MS,
    'grpc.http2.min_ping_interval_without_data_ms': MIN_CLIENT_PING_INTERVAL_MS,
    'grpc.http2.min_time_between_pings_ms': MIN_CLIENT_PING_INTERVAL_MS,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_concurrent_streams': options.env.ISTIO_GPRC_MAXSTREAMS,
    'grpc.max_receive_message_length': options.env.ISTIO_GPRC_MAXRECVMSGSIZE,
    // Nothing here serves channelz, and grpc-js's bookkeeping for it runs on every call's path
    // (a measurable share of the event loop per certificate in a CA flood).
    'grpc.enable_channelz': 0,
  };
}
