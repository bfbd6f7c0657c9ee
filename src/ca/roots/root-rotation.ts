// Rotation of the self-signed root as a pure state machine: the stored state and a clock in, the
// next state out. It goes further than istiod, which re-issues the root in place: a rotation has
// three phases, so no peer ever meets a leaf its trust bundle cannot verify.
//
//   steady        one root signs and is the whole bundle
//   distributing  a new root is in the bundle beside the old one; the old one still signs
//   overlap       the new root signs; the old one stays in the bundle for the longest leaf TTL
//
// Time only moves a rotation forwards, so a process restarted mid-rotation (or a replica that
// reads the state another replica wrote) resumes where the clock says it should be.

import * as crypto from 'node:crypto';
import { CA_BACKDATE_MS } from '../signing/ca-cert-generator';

export type RotationPhase = 'steady' | 'distributing' | 'overlap';

/** A root certificate and its private key, PEM. */
export interface RootPair {
  certPem: string;
  keyPem: string;
}

/** What is persisted beside the signing root while (and after) a rotation runs. */
export interface RotationRecord {
  phase: RotationPhase;
  /** When the phase began, ms since the epoch. */
  since: number;
  /** distributing: the new root, trusted but not yet signing. */
  next?: RootPair;
  /** overlap: the old root's certificate, still trusted. */
  retiredCertPem?: string;
}

/** The self-signed CA's stored state: the root that signs, and the rotation around it. */
export interface RootState {
  signing: RootPair;
  rotation: RotationRecord;
}

export interface RotationPolicy {
  /** CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: the last part of a root's life in which it is renewed. */
  gracePercentile: number;
  /** CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY: how long the new root is trusted before it signs. */
  distributionDelayMs: number;
  /** MAX_WORKLOAD_CERT_TTL: the longest a leaf signed by the old root can still be in use after the switch. */
  maxLeafTtlMs: number;
  /**
   * CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: another replica learns of the switch at its next
   * check, and signs with the old root until then, so the overlap lasts this much longer.
   */
  checkIntervalMs?: number;
}

export type RotationAction = 'none' | 'begin' | 'switch' | 'finish';

interface Validity {
  notBefore: number;
  notAfter: number;
}

/** A root's validity in ms; parsed per call, which runs once per check interval. */
export function rootValidity(certPem: string): Validity {
  const cert = new crypto.X509Certificate(certPem);
  return { notBefore: new Date(cert.validFrom).getTime(), notAfter: new Date(cert.validTo).getTime() };
}

/**
 * When a root enters its grace period: the last `percentile` % of its lifetime, as istiod counts
 * it. Our roots are back-dated by CA_BACKDATE_MS against clock skew; that slack is not lifetime.
 */
export function graceStartsAt(certPem: string, percentile: number): number {
  const { notBefore, notAfter } = rootValidity(certPem);
  const lifetime = Math.max(0, notAfter - notBefore - CA_BACKDATE_MS);
  return notAfter - (lifetime * percentile) / 100;
}

/** The state of a root that has never been rotated. */
export function steadyState(signing: RootPair, now: number): RootState {
  return { signing, rotation: { phase: 'steady', since: now } };
}

/** What the clock says must happen next to `state`. */
export function nextAction(state: RootState, now: number, policy: RotationPolicy): RotationAction {
  const r = state.rotation;
  const signingExpiry = rootValidity(state.signing.certPem).notAfter;
  switch (r.phase) {
    case 'steady':
      return now >= graceStartsAt(state.signing.certPem, policy.gracePercentile) ? 'begin' : 'none';
    case 'distributing':
      // An expired old root protects nobody: there is nothing left to wait for.
      return now >= r.since + policy.distributionDelayMs || now >= signingExpiry ? 'switch' : 'none';
    case 'overlap': {
      const retiredExpiry = r.retiredCertPem ? rootValidity(r.retiredCertPem).notAfter : 0;
      const lastOldLeafExpiry = r.since + (policy.checkIntervalMs ?? 0) + policy.maxLeafTtlMs;
      return now >= Math.min(lastOldLeafExpiry, retiredExpiry) ? 'finish' : 'none';
    }
  }
}

/** steady -> distributing: `next` joins the bundle. */
export function beginRotation(state: RootState, next: RootPair, now: number): RootState {
  if (state.rotation.phase !== 'steady') throw new Error(`cannot begin a rotation in phase ${state.rotation.phase}`);
  return { signing: state.signing, rotation: { phase: 'distributing', since: now, next } };
}

/** distributing -> overlap: the new root signs, the old one is still trusted. */
export function switchSigning(state: RootState, now: number): RootState {
  const next = state.rotation.next;
  if (state.rotation.phase !== 'distributing' || !next)
    throw new Error(`cannot switch signing in phase ${state.rotation.phase}`);
  return { signing: next, rotation: { phase: 'overlap', since: now, retiredCertPem: state.signing.certPem } };
}

/** overlap -> steady: the old root leaves the bundle. */
export function finishRotation(state: RootState, now: number): RootState {
  if (state.rotation.phase !== 'overlap') throw new Error(`cannot finish a rotation in phase ${state.rotation.phase}`);
  return steadyState(state.signing, now);
}

/**
 * Applies every transition the clock allows except `begin` (which needs a new root, generated
 * outside this pure function). After a long outage a distributing rotation switches at once, but
 * its overlap counts from now: leaves the old root signed before the outage may still be in use.
 */
export function settle(state: RootState, now: number, policy: RotationPolicy): RootState {
  let s = state;
  // Each step moves the phase strictly forward (distributing -> overlap -> steady), so two suffice.
  for (let i = 0; i < 2; i++) {
    const action = nextAction(s, now, policy);
    if (action === 'switch') s = switchSigning(s, now);
    else if (action === 'finish') s = finishRotation(s, now);
    else break;
  }
  return s;
}

/** The roots the bundle carries in `state`: the signing root first. */
export function trustedRoots(state: RootState): string[] {
  const r = state.rotation;
  if (r.phase === 'distributing' && r.next) return [state.signing.certPem, r.next.certPem];
  if (r.phase === 'overlap' && r.retiredCertPem) return [state.signing.certPem, r.retiredCertPem];
  return [state.signing.certPem];
}

/** True when two states say the same thing (the same roots in the same phase since the same time). */
export function sameState(a: RootState, b: RootState): boolean {
  return (
    a.signing.certPem === b.signing.certPem &&
    a.rotation.phase === b.rotation.phase &&
    a.rotation.since === b.rotation.since &&
    a.rotation.next?.certPem === b.rotation.next?.certPem &&
    a.rotation.retiredCertPem === b.rotation.retiredCertPem
  );
}

/** Reads a persisted record back, refusing anything that is not one (a hand edit, another tool). */
export function parseRotationRecord(text: string, where: string): RotationRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not JSON: ${(err as Error).message}`);
  }
  const o = raw as Partial<RotationRecord> | null;
  if (!o || typeof o !== 'object') throw new Error(`${where}: not an object`);
  if (o.phase !== 'steady' && o.phase !== 'distributing' && o.phase !== 'overlap')
    throw new Error(`${where}: phase must be steady, distributing or overlap`);
  if (typeof o.since !== 'number' || !Number.isFinite(o.since)) throw new Error(`${where}: since must be a time in ms`);
  if (o.phase === 'distributing' && (typeof o.next?.certPem !== 'string' || typeof o.next.keyPem !== 'string'))
    throw new Error(`${where}: a distributing rotation needs next.certPem and next.keyPem`);
  if (o.phase === 'overlap' && typeof o.retiredCertPem !== 'string')
    throw new Error(`${where}: an overlapping rotation needs retiredCertPem`);
  return {
    phase: o.phase,
    since: o.since,
    ...(o.phase === 'distributing' && o.next ? { next: { certPem: o.next.certPem, keyPem: o.next.keyPem } } : {}),
    ...(o.phase === 'overlap' && o.retiredCertPem ? { retiredCertPem: o.retiredCertPem } : {}),
  };
}
