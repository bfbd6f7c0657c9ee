// A listener that could not bind. The process names the flag that set the address (it knows
// which listener is which); this says which listener, which address and why, in words.

const REASONS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'no interface of this host has that address',
};

export class ListenError extends Error {
  constructor(
    /** The listener's name: http, monitoring, webhook, grpc, secure-grpc. */
    readonly listener: string,
    readonly address: string,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`${address}: ${code !== undefined && REASONS[code] ? REASONS[code] : detail}`);
    this.name = 'ListenError';
  }
}

/** The errno code of a bind failure: Node's `code`, or the one grpc-js folds into its message. */
export function bindErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  const message = (err as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? /\b(E[A-Z]{3,})\b/.exec(message)?.[1] : undefined;
}
