// Whether a plugged-in CA's reloaded files may change its roots. A root swapped in place splits the
// mesh: workloads still holding certificates from the old root and those renewed under the new one
// no longer trust each other until every certificate has renewed. So, as istiod does, a changed
// root-cert.pem is refused unless ISTIO_MULTIROOT_MESH is on, and even then only as one step of a
// rotation with overlap: roots added beside the ones in use, or roots removed from them, never
// both at once. A restart still takes whatever the files hold (the operator asked for it).

import type * as crypto from 'node:crypto';

/** How the root set of reloaded files relates to the one in use. */
export interface RootChange {
  added: readonly crypto.X509Certificate[];
  removed: readonly crypto.X509Certificate[];
}

export function rootChange(
  current: readonly crypto.X509Certificate[],
  next: readonly crypto.X509Certificate[],
): RootChange {
  const had = new Set(current.map((c) => c.fingerprint256));
  const has = new Set(next.map((c) => c.fingerprint256));
  return {
    added: next.filter((c) => !had.has(c.fingerprint256)),
    removed: current.filter((c) => !has.has(c.fingerprint256)),
  };
}

const RUNBOOK =
  'to rotate, set ISTIO_MULTIROOT_MESH=true and add the new root beside the old one in root-cert.pem; once every workload has renewed, sign with the new root; once those certificates have renewed, remove the old root (docs/ca.md)';

const subjects = (certs: readonly crypto.X509Certificate[]) =>
  certs.map((c) => c.subject.replace(/\n/g, ', ')).join('; ');

/**
 * Why reloaded files may not replace the roots in use (one line, naming the way out), or undefined
 * when the change is allowed: no root changed, or with `multiRoot`, roots only added or only removed.
 */
export function rootChangeProblem(change: RootChange, multiRoot: boolean): string | undefined {
  const { added, removed } = change;
  if (added.length === 0 && removed.length === 0) return undefined;
  const what = [
    added.length > 0 ? `added ${subjects(added)}` : '',
    removed.length > 0 ? `removed ${subjects(removed)}` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
  if (!multiRoot)
    return `root-cert.pem changed (${what}) and a root is never swapped in place: workloads holding certificates from the old root would be cut off from those renewed under the new one; ${RUNBOOK}`;
  if (added.length > 0 && removed.length > 0)
    return `root-cert.pem changed (${what}): roots may be added or removed in one step, not both, or workloads holding certificates from a removed root are cut off from those renewed under an added one; ${RUNBOOK}`;
  return undefined;
}
