// The moment the CA can no longer issue: the end of its signing chain. Watched so /ready and
// /debug/ca say so when it comes, not only the CreateCertificate calls that are refused from then.

import type { CertificateAuthority } from './signing/authority';
import { MAX_TIMER_MS } from './serving-cert/serving-cert-issuer';

/** Why the CA cannot issue now, or undefined while it can. */
export function chainEndReason(authority: CertificateAuthority, now = Date.now()): string | undefined {
  const end = authority.notAfterLimit();
  return now >= end.getTime() ? `signing certificate has expired at ${end.toISOString()}` : undefined;
}

/**
 * Calls `onState` now, at the chain's end (a timer, re-armed in steps of at most MAX_TIMER_MS) and
 * whenever the CA's material changes. Returns the function that stops watching.
 */
export function watchChainEnd(
  authority: CertificateAuthority,
  onState: (reason: string | undefined) => void,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const reason = chainEndReason(authority);
    onState(reason);
    if (reason) return;
    const left = authority.notAfterLimit().getTime() - Date.now();
    // One millisecond past the end, so the check after it sees the chain expired.
    timer = setTimeout(arm, Math.min(left + 1, MAX_TIMER_MS));
    timer.unref();
  };
  arm();
  const off = authority.onChange(arm);
  return () => {
    off();
    if (timer) clearTimeout(timer);
  };
}
