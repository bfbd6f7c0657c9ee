// What the gRPC call's lifetime means to the work done for it: an AbortSignal that fires when the
// client cancels (or its connection drops) or when the call's deadline passes, so a TokenReview
// made for the call does not go on after the client has left.

import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';

export interface CallSignal {
  signal: AbortSignal;
  /** Stops listening to the call (call it once the work is done). */
  dispose: () => void;
}

export function callSignal(call: ServerSurfaceCall): CallSignal {
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
