import {
  claimRecord,
  decide,
  EMPTY_RECORD,
  holderKeyOf,
  keyEvicts,
  LeaderRecordError,
  LEASE_HOLDER_KEY_ANNOTATION,
  leaseAnnotations,
  leaseSpecFromRecord,
  parseRecord,
  recordFromLease,
  releaseRecord,
  rfc3339Micros,
  rfc3339Seconds,
  serializeRecord,
  type LeaderRecord,
} from '../../../src/store/kube/leader-record';

// What istiod (client-go's ConfigMapLock + json.Marshal of LeaderElectionRecord) writes.
const ISTIOD_ANNOTATION =
  '{"holderIdentity":"istiod-5d4f7c9b8-x2x7k","holderKey":"default","leaseDurationSeconds":30,' +
  '"acquireTime":"2026-12-03T07:00:00Z","renewTime":"2026-12-03T07:54:36Z","leaderTransitions":3}';

const held: LeaderRecord = {
  holderIdentity: 'istiod-5d4f7c9b8-x2x7k',
  holderKey: 'default',
  leaseDurationSeconds: 30,
  acquireTime: '2026-12-03T07:00:00Z',
  renewTime: '2026-12-03T07:54:36Z',
  leaderTransitions: 3,
};

describe('the record format', () => {
  test('an istiod record parses, and serializes back byte for byte', () => {
    expect(parseRecord(ISTIOD_ANNOTATION)).toEqual(held);
    expect(serializeRecord(held)).toBe(ISTIOD_ANNOTATION);
  });

  test('a released record (no holder, null times as Go writes a zero time) parses as free', () => {
    const r = parseRecord(
      '{"holderIdentity":"","holderKey":"","leaseDurationSeconds":1,"acquireTime":null,"renewTime":null,"leaderTransitions":4}',
    );
    expect(r).toEqual({ ...EMPTY_RECORD, leaseDurationSeconds: 1, leaderTransitions: 4 });
    expect(serializeRecord(r)).toContain('"acquireTime":null');
  });

  test('a record missing fields reads them as empty, as Go does', () => {
    expect(parseRecord('{"holderIdentity":"a"}')).toEqual({ ...EMPTY_RECORD, holderIdentity: 'a' });
  });

  test.each([
    ['not json', /not JSON/],
    ['[]', /not a JSON object/],
    ['"x"', /not a JSON object/],
    ['{"holderIdentity":7}', /field holderIdentity is number, not a string/],
    ['{"leaderTransitions":"2"}', /field leaderTransitions is string, not a number/],
  ])('a malformed record %s is an error naming the problem', (text, message) => {
    expect(() => parseRecord(text)).toThrow(LeaderRecordError);
    expect(() => parseRecord(text)).toThrow(message);
  });

  test('ConfigMap record times have whole seconds; Lease times have microseconds', () => {
    const ms = Date.UTC(2026, 11, 3, 7, 54, 36, 789);
    expect(rfc3339Seconds(ms)).toBe('2026-12-03T07:54:36Z');
    expect(rfc3339Micros(ms)).toBe('2026-12-03T07:54:36.789000Z');
  });

  test('a Lease carries the record in its spec and the key in istiod annotation', () => {
    const spec = leaseSpecFromRecord(held);
    expect(spec).toEqual({
      holderIdentity: held.holderIdentity,
      leaseDurationSeconds: 30,
      acquireTime: held.acquireTime,
      renewTime: held.renewTime,
      leaseTransitions: 3,
    });
    expect(recordFromLease(spec, { [LEASE_HOLDER_KEY_ANNOTATION]: 'default' })).toEqual(held);
    expect(recordFromLease(undefined, undefined)).toEqual(EMPTY_RECORD);
  });

  test('the Lease key annotation is set for a holder and removed on release, other annotations kept', () => {
    expect(leaseAnnotations({ a: 'b' }, 'canary')).toEqual({ a: 'b', [LEASE_HOLDER_KEY_ANNOTATION]: 'canary' });
    expect(leaseAnnotations({ a: 'b', [LEASE_HOLDER_KEY_ANNOTATION]: 'canary' }, '')).toEqual({ a: 'b' });
    expect(leaseAnnotations({ [LEASE_HOLDER_KEY_ANNOTATION]: 'canary' }, '')).toBeUndefined();
  });
});

describe('revision priority (istiod LocationPrioritizedComparison, for a local istiod)', () => {
  test.each([
    // holderKey, ours, defaultRevision, evicts
    ['canary', 'default', 'default', true], // the default revision takes the lock from another revision
    ['default', 'canary', 'canary', true], // whichever revision the default tag points at
    ['', 'default', 'default', true], // a key-less holder is another revision too
    ['canary', 'default', '', false], // no default tag: no revision outranks another
    ['canary', 'default', 'other', false], // neither is the default
    ['default', 'canary', 'default', false], // a non-default revision never takes from the default
    ['default', 'default', 'default', false], // same revision: plain expiry rules
    ['^default', 'default', '', true], // a local istiod takes the lock from a remote one of its revision
    ['^canary', 'default', '', false], // a remote one of another revision: only if we are the default
    ['^canary', 'default', 'default', true],
  ])('holder key %j, ours %j, default %j: evicts=%j', (holderKey, ours, defaultRevision, evicts) => {
    expect(keyEvicts(holderKey, ours, defaultRevision)).toBe(evicts);
  });
});

describe('revision priority for a replica managing a remote cluster (EXTERNAL_ISTIOD, key prefix ^)', () => {
  test.each([
    // holderKey, ours, defaultRevision, evicts
    ['^default', 'default', '', false], // another external replica of our revision: plain expiry rules
    ['default', 'default', '', false], // an istiod inside that cluster keeps the lock from us
    ['canary', 'default', 'default', true], // the default revision still outranks another revision
    ['^canary', 'default', 'default', true],
    ['default', 'canary', 'default', false],
  ])('holder key %j, ours %j, default %j: evicts=%j', (holderKey, ours, defaultRevision, evicts) => {
    expect(keyEvicts(holderKey, ours, defaultRevision, true)).toBe(evicts);
  });

  test('the key written carries the prefix only for a remote lock', () => {
    expect(holderKeyOf('default', true)).toBe('^default');
    expect(holderKeyOf('canary', false)).toBe('canary');
  });
});

describe('the lock decision (client-go, expiry on the local clock)', () => {
  const base = { identity: 'me', observedAtMs: 1_000, leaseDurationMs: 30_000, evicts: () => false };

  test('our own record is renewed, even past its lease', () => {
    expect(decide({ ...base, record: { ...held, holderIdentity: 'me' }, nowMs: 100_000 })).toBe('renew');
  });

  test('a record without holder is acquired', () => {
    expect(decide({ ...base, record: EMPTY_RECORD, nowMs: 1_001 })).toBe('acquire');
  });

  test('another holder is respected until a lease duration passes without its record changing', () => {
    expect(decide({ ...base, record: held, nowMs: 30_999 })).toBe('held');
    expect(decide({ ...base, record: held, nowMs: 31_000 })).toBe('acquire');
  });

  test('the record times do not matter, only when this replica saw it change', () => {
    const ancient = { ...held, renewTime: '2001-01-01T00:00:00Z', leaseDurationSeconds: 1 };
    expect(decide({ ...base, record: ancient, nowMs: 2_000 })).toBe('held');
  });

  test('a live holder whose key ranks below ours is stolen from', () => {
    expect(decide({ ...base, record: held, nowMs: 2_000, evicts: (k) => k === 'default' })).toBe('steal');
  });
});

describe('the record a replica writes', () => {
  const claim = { identity: 'me', key: 'default', leaseDurationMs: 30_000, time: rfc3339Seconds };
  const now = Date.UTC(2026, 11, 3, 8, 0, 0);

  test('creating the lock starts at zero transitions', () => {
    expect(claimRecord(undefined, 'acquire', { ...claim, nowMs: now })).toEqual({
      holderIdentity: 'me',
      holderKey: 'default',
      leaseDurationSeconds: 30,
      acquireTime: '2026-12-03T08:00:00Z',
      renewTime: '2026-12-03T08:00:00Z',
      leaderTransitions: 0,
    });
  });

  test('a renewal keeps acquireTime and the transition count', () => {
    const mine = { ...held, holderIdentity: 'me' };
    const r = claimRecord(mine, 'renew', { ...claim, nowMs: now });
    expect(r).toMatchObject({ acquireTime: held.acquireTime, renewTime: '2026-12-03T08:00:00Z', leaderTransitions: 3 });
  });

  test.each(['acquire', 'steal'] as const)('%s counts a transition and restarts acquireTime', (decision) => {
    const r = claimRecord(held, decision, { ...claim, nowMs: now });
    expect(r).toMatchObject({ holderIdentity: 'me', acquireTime: '2026-12-03T08:00:00Z', leaderTransitions: 4 });
  });

  test('the lease duration is written in whole seconds, truncated as client-go does', () => {
    expect(
      claimRecord(undefined, 'acquire', { ...claim, leaseDurationMs: 2_900, nowMs: now }).leaseDurationSeconds,
    ).toBe(2);
  });

  test('a release clears holder and key, with a one-second lease and the transition count kept', () => {
    expect(releaseRecord(held, now, rfc3339Seconds)).toEqual({
      holderIdentity: '',
      holderKey: '',
      leaseDurationSeconds: 1,
      acquireTime: '2026-12-03T08:00:00Z',
      renewTime: '2026-12-03T08:00:00Z',
      leaderTransitions: 3,
    });
  });
});
