// What the gRPC call's lifetime means to the work done for it: an AbortSignal that fires when the
// client cancels (or its connection drops) or when the call's deadline passes, so a TokenReview
// made for the call does not go on after the client has left.

import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';

export interface CallSignal {
  /** Made when first read. */
  readonly signal: AbortSignal;
  /** Stops listening to the call (call it once the work is done). */
  dispose: () => void;
}

/**
 * The signal is made on first read: most calls are answered from a cache and never read it, and
 * an AbortController, a 'cancelled' listener and a deadline timer per call cost the CA's event
 * loop as much as a tenth of a signature under a flood.
 */
export function callSignal(call: ServerSurfaceCall): CallSignal {
  let made: { signal: AbortSignal; dispose: () => void } | undefined;
  let disposed = false;
  return {
    get signal() {
      // Read after dispose (the work is done): a signal that never fires, with nothing left
      // listening to the call or waiting for its deadline.
      made ??= disposed ? { signal: new AbortController().signal, dispose: () => {} } : listen(call);
      return made.signal;
    },
    dispose: () => {
      disposed = true;
      made?.dispose();
    },
  };
}

function listen(call: ServerSurfaceCall): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onCancelled = () => controller.abort('the client cancelled the call');
  // Callers that are not grpc-js calls (a test's stand-in) may lack the events or the deadline.
  const surface = call as Partial<ServerSurfaceCall>;
  const events = typeof surface.on === 'function';
  if (call.cancelled) onCancelled();
  else if (events) call.on('cancelled', onCancelled);
  const deadline = typeof surface.getDeadline === 'function' ? call.getDeadline() : Infinity;
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  const timer = Number.isFinite(at)
    ? setTimeout(() => controller.abort('the call deadline passed'), Math.max(0, at - Date.now()))
    : undefined;
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      if (events) call.removeListener('cancelled', onCancelled);
    },
  };
}
