// What the xDS server does when a reach past grpc-js's public API (transport.ts) finds another
// shape: the server keeps working on grpc-js's public path, and the operator learns which hook
// was lost, once per hook in the log and every time in a metric, rather than from a slower or
// unbounded server. The canary test (test/integration/xds/grpc-canary.test.ts) fails first.

import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../log/logger';

export const METRIC_GRPC_HOOK_FALLBACKS = 'istiod_ts_grpc_hook_fallbacks_total';

/** Each reach past grpc-js, and what is lost when it falls back. */
export const GRPC_HOOKS = {
  transport:
    "a stream's bytes written and its reset are not reachable: a client that stops reading is cut by closing its whole connection, and stalls are found only at the drain deadline",
  'direct-write': 'responses are written through grpc-js, which copies each message once per stream',
  decoder: 'large requests are concatenated by grpc-js before they are decoded, not digested as they arrive',
  'receive-windows': "connections keep node:http2's 64 KiB receive windows, so large requests wait for window updates",
} as const;

export type GrpcHook = keyof typeof GRPC_HOOKS;

export class GrpcHookFallbacks {
  private readonly counter: Counter<'hook'> | undefined;
  private readonly logged = new Set<GrpcHook>();

  constructor(
    private readonly log: Logger,
    registry?: Registry,
  ) {
    const existing = registry?.getSingleMetric(METRIC_GRPC_HOOK_FALLBACKS);
    this.counter =
      existing instanceof Counter
        ? existing
        : registry
          ? new Counter({
              name: METRIC_GRPC_HOOK_FALLBACKS,
              help: 'Calls on which a reach past grpc-js found another shape and its fallback was taken, by hook',
              labelNames: ['hook'],
              registers: [registry],
            })
          : undefined;
  }

  /** Records one fallback: counted always, logged the first time for each hook. */
  taken(hook: GrpcHook): void {
    this.counter?.inc({ hook });
    if (this.logged.has(hook)) return;
    this.logged.add(hook);
    this.log.warn({ hook }, `grpc-js internals differ from the pinned version: ${GRPC_HOOKS[hook]}`);
  }
}
