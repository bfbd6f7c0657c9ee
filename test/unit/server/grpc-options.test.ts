import { parseServeOptions } from '../../../src/config/options';
import {
  CONNECTION_AGE_GRACE_MS,
  grpcServerOptions,
  MIN_CLIENT_PING_INTERVAL_MS,
} from '../../../src/server/grpc-options';

describe('gRPC server options', () => {
  it('connections age out after keepaliveMaxServerConnectionAge with a grace period', () => {
    const o = grpcServerOptions(parseServeOptions(['--keepaliveMaxServerConnectionAge', '5m'], {}));
    expect(o['grpc.max_connection_age_ms']).toBe(300_000);
    expect(o['grpc.max_connection_age_grace_ms']).toBe(CONNECTION_AGE_GRACE_MS);
  });

  it('stream and message limits come from ISTIO_GPRC_MAXSTREAMS and ISTIO_GPRC_MAXRECVMSGSIZE', () => {
    const o = grpcServerOptions(
      parseServeOptions([], { ISTIO_GPRC_MAXSTREAMS: '50', ISTIO_GPRC_MAXRECVMSGSIZE: '1048576' }),
    );
    expect(o['grpc.max_concurrent_streams']).toBe(50);
    expect(o['grpc.max_receive_message_length']).toBe(1_048_576);
  });

  it('channelz is off: nothing serves it, and its bookkeeping costs every call', () => {
    expect(grpcServerOptions(parseServeOptions([], {}))['grpc.enable_channelz']).toBe(0);
  });

  it('client pings are allowed every 15 s, as ztunnel sends them', () => {
    const o = grpcServerOptions(parseServeOptions([], {}));
    expect(MIN_CLIENT_PING_INTERVAL_MS).toBe(15_000);
    expect(o['grpc.http2.min_ping_interval_without_data_ms']).toBe(MIN_CLIENT_PING_INTERVAL_MS);
  });
});
