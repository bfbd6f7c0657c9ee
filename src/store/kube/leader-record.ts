// The leader-election record istiod and client-go keep in a lock object, and the pure decisions
// made on it: read and write it in the two places istiod keeps it (a ConfigMap annotation holding
// the record as JSON, or a Lease's spec plus an annotation for the key), decide whether this
// replica may renew, take over or steal the lock, and build the record it writes. No I/O here:
// leader-lock.ts reads and writes the objects, leader-election.ts runs the loop.

/** The ConfigMap annotation holding the record as JSON (client-go's resourcelock constant). */
export const LEADER_RECORD_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** Where istiod keeps the holder key of a Lease lock, since a Lease spec has no field for it. */
export const LEASE_HOLDER_KEY_ANNOTATION = 'leader.istio.io/holder-key';
/** istiod prefixes the key of an istiod that manages a remote cluster with this. */
export const REMOTE_KEY_PREFIX = '^';
/** The revision istiod assumes when none is set, and so the key it writes then. */
export const DEFAULT_REVISION_NAME = 'default';

/**
 * client-go's LeaderElectionRecord as istiod extends it: `holderKey` carries the holder's
 * revision so the default revision may take the lock from another revision. Times are kept as
 * the strings found on the wire; only the local clock decides expiry.
 */
export interface LeaderRecord {
  holderIdentity: string;
  holderKey: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaderTransitions: number;
}

/** The record of a lock object that exists but was never written (client-go reads it as empty). */
export const EMPTY_RECORD: LeaderRecord = {
  holderIdentity: '',
  holderKey: '',
  leaseDurationSeconds: 0,
  acquireTime: '',
  renewTime: '',
  leaderTransitions: 0,
};

export class LeaderRecordError extends Error {}

/** metav1.Time on the wire: RFC 3339 in UTC with whole seconds. */
export function rfc3339Seconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime on the wire (Lease spec times): RFC 3339 with microseconds. */
export function rfc3339Micros(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function field<T>(o: Record<string, unknown>, name: string, type: 'string' | 'number', fallback: T): T {
  const v = o[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== type) throw new LeaderRecordError(`field ${name} is ${typeof v}, not a ${type}`);
  return v as T;
}

/**
 * Parses the annotation value. Missing fields read as empty, as Go's JSON decoder leaves them;
 * anything that is not a JSON object of the right field types is an error naming the problem.
 */
export function parseRecord(text: string): LeaderRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new LeaderRecordError(`not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new LeaderRecordError('not a JSON object');
  const o = parsed as Record<string, unknown>;
  return {
    holderIdentity: field(o, 'holderIdentity', 'string', ''),
    holderKey: field(o, 'holderKey', 'string', ''),
    leaseDurationSeconds: field(o, 'leaseDurationSeconds', 'number', 0),
    acquireTime: field(o, 'acquireTime', 'string', ''),
    renewTime: field(o, 'renewTime', 'string', ''),
    leaderTransitions: field(o, 'leaderTransitions', 'number', 0),
  };
}

/** The annotation value, with istiod's field order and an unset time as JSON null (metav1.Time's zero). */
export function serializeRecord(r: LeaderRecord): string {
  return JSON.stringify({
    holderIdentity: r.holderIdentity,
    holderKey: r.holderKey,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime === '' ? null : r.acquireTime,
    renewTime: r.renewTime === '' ? null : r.renewTime,
    leaderTransitions: r.leaderTransitions,
  });
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Lease read as a record: the spec, and the key from istiod's annotation. */
export function recordFromLease(
  spec: LeaseSpec | undefined,
  annotations: Record<string, string> | undefined,
): LeaderRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    holderKey: annotations?.[LEASE_HOLDER_KEY_ANNOTATION] ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: spec?.acquireTime ?? '',
    renewTime: spec?.renewTime ?? '',
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
}

/** The Lease spec for a record (times as MicroTime); the key goes to the annotation, see leaseAnnotations. */
export function leaseSpecFromRecord(r: LeaderRecord): LeaseSpec {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    ...(r.acquireTime !== '' ? { acquireTime: r.acquireTime } : {}),
    ...(r.renewTime !== '' ? { renewTime: r.renewTime } : {}),
    leaseTransitions: r.leaderTransitions,
  };
}

/** The Lease's annotations with the key set, or removed when empty (a released lock), as istiod does. */
export function leaseAnnotations(
  current: Record<string, string> | undefined,
  holderKey: string,
): Record<string, string> | undefined {
  const next = Object.fromEntries(Object.entries(current ?? {}).filter(([k]) => k !== LEASE_HOLDER_KEY_ANNOTATION));
  if (holderKey !== '') next[LEASE_HOLDER_KEY_ANNOTATION] = holderKey;
  return Object.keys(next).length > 0 ? next : undefined;
}

/**
 * istiod's prioritized election: whether a replica of revision `ours` takes an unexpired lock whose
 * holder wrote `holderKey`. The default revision takes the lock from any other revision; a local
 * istiod takes it from a remote one of its own revision. `weAreRemote` is true when this replica
 * manages the lock's cluster from outside it (EXTERNAL_ISTIOD): then the second rule never favours
 * it, so an istiod running in that cluster keeps the lock. `defaultRevision` is '' while unknown,
 * and then only the second rule applies.
 */
export function keyEvicts(holderKey: string, ours: string, defaultRevision: string, weAreRemote = false): boolean {
  const remote = holderKey.startsWith(REMOTE_KEY_PREFIX);
  const theirs = remote ? holderKey.slice(REMOTE_KEY_PREFIX.length) : holderKey;
  if (theirs !== ours && defaultRevision !== '' && defaultRevision === ours) return true;
  return theirs === ours && remote && !weAreRemote;
}

/** The holder key a replica writes: its revision, after REMOTE_KEY_PREFIX when it manages the cluster from outside. */
export function holderKeyOf(revision: string, remote: boolean): string {
  return remote ? REMOTE_KEY_PREFIX + revision : revision;
}

/**
 * What a replica may do with the lock it just read:
 * - `renew`: it holds it;
 * - `acquire`: nobody holds it, or the holder has not renewed for a lease duration;
 * - `steal`: the holder is live but its key ranks below ours (keyEvicts);
 * - `held`: another replica holds it.
 */
export type LockDecision = 'renew' | 'acquire' | 'steal' | 'held';

export interface DecisionInput {
  record: LeaderRecord;
  identity: string;
  /** Local-clock time the record was last seen to change (or written by us). */
  observedAtMs: number;
  nowMs: number;
  leaseDurationMs: number;
  /** keyEvicts bound to this replica's revision and the current default revision. */
  evicts: (holderKey: string) => boolean;
}

/** client-go's rule: expiry is measured from when this replica saw the record change, never from its times. */
export function decide(i: DecisionInput): LockDecision {
  const holder = i.record.holderIdentity;
  if (holder === i.identity) return 'renew';
  if (holder === '' || i.observedAtMs + i.leaseDurationMs <= i.nowMs) return 'acquire';
  return i.evicts(i.record.holderKey) ? 'steal' : 'held';
}

export interface Claim {
  identity: string;
  key: string;
  leaseDurationMs: number;
  /** Formats a time for the lock kind (seconds in a ConfigMap record, microseconds in a Lease). */
  time: (ms: number) => string;
  nowMs: number;
}

/** The record a replica writes: a renewal keeps acquireTime and the transition count; a takeover bumps it. */
export function claimRecord(current: LeaderRecord | undefined, decision: LockDecision, c: Claim): LeaderRecord {
  const now = c.time(c.nowMs);
  const renewing = decision === 'renew' && current !== undefined;
  return {
    holderIdentity: c.identity,
    holderKey: c.key,
    // client-go truncates the duration to whole seconds; the others never read it for expiry.
    leaseDurationSeconds: Math.floor(c.leaseDurationMs / 1000),
    acquireTime: renewing && current.acquireTime !== '' ? current.acquireTime : now,
    renewTime: now,
    leaderTransitions: current === undefined ? 0 : renewing ? current.leaderTransitions : current.leaderTransitions + 1,
  };
}

/** What a stopping leader writes: no holder, a one-second lease, the transition count kept. */
export function releaseRecord(last: LeaderRecord, nowMs: number, time: (ms: number) => string): LeaderRecord {
  const now = time(nowMs);
  return {
    holderIdentity: '',
    holderKey: '',
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaderTransitions: last.leaderTransitions,
  };
}
