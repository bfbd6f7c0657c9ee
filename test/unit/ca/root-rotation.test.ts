// The self-signed root rotation as a state machine: a new root is trusted before it signs, signs
// only after the distribution delay, and the old root stays trusted for the longest leaf TTL.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CA_BACKDATE_MS, generateCaCertificate } from '../../../src/ca/signing/ca-cert-generator';
import { CA_CERT_FILE, CA_KEY_FILE, CA_ROTATION_FILE, LocalCaSecretStore } from '../../../src/ca/roots/ca-secret-store';
import {
  beginRotation,
  graceStartsAt,
  nextAction,
  parseRotationRecord,
  RootPair,
  RotationPolicy,
  settle,
  steadyState,
  switchSigning,
  trustedRoots,
} from '../../../src/ca/roots/root-rotation';
import { RootRotator } from '../../../src/ca/roots/root-rotation-driver';
import { PRIVATE_FILE_MODE } from '../../../src/config/atomic-file';
import { parseServeOptions } from '../../../src/config/options';
import { tempDir } from '../../support/ca/fixtures';
import { captureLogs } from '../../support/logs';

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A 100-day root with a 20 % grace period enters it 80 days after T0. */
const ROOT_TTL = 100 * DAY;
const POLICY: RotationPolicy = { gracePercentile: 20, distributionDelayMs: DAY, maxLeafTtlMs: 2 * DAY };

async function root(notBeforeMs: number, ttlMs = ROOT_TTL, name = 'cluster.local'): Promise<RootPair> {
  const g = await generateCaCertificate({ subject: `O=${name}`, keyType: 'ECDSA', ttlMs, now: new Date(notBeforeMs) });
  return { certPem: g.certPem, keyPem: g.keyPem };
}

describe('root rotation state machine', () => {
  let old: RootPair;
  let next: RootPair;
  beforeAll(async () => {
    old = await root(T0);
    next = await root(T0 + 80 * DAY);
  });

  test('the grace period is the last percentile of the lifetime, not counting the clock-skew back-dating', () => {
    expect(graceStartsAt(old.certPem, 20)).toBe(T0 + 80 * DAY);
    expect(graceStartsAt(old.certPem, 100)).toBe(T0);
    // The certificate really is back-dated; the grace period ignores that slack.
    expect(new Date(new crypto.X509Certificate(old.certPem).validFrom).getTime()).toBe(T0 - CA_BACKDATE_MS);
  });

  test('a root outside its grace period is left alone; inside it a rotation begins', () => {
    const s = steadyState(old, T0);
    expect(nextAction(s, T0 + 80 * DAY - 1, POLICY)).toBe('none');
    expect(nextAction(s, T0 + 80 * DAY, POLICY)).toBe('begin');
    expect(trustedRoots(s)).toEqual([old.certPem]);
  });

  test('distributing: the new root is in the bundle beside the old one, which still signs', () => {
    const s = beginRotation(steadyState(old, T0), next, T0 + 80 * DAY);
    expect(s.rotation.phase).toBe('distributing');
    expect(s.signing).toEqual(old);
    expect(trustedRoots(s)).toEqual([old.certPem, next.certPem]);
  });

  test('signing switches to the new root only once the distribution delay has passed', () => {
    const begun = T0 + 80 * DAY;
    const s = beginRotation(steadyState(old, T0), next, begun);
    expect(nextAction(s, begun + POLICY.distributionDelayMs - 1, POLICY)).toBe('none');
    expect(nextAction(s, begun + POLICY.distributionDelayMs, POLICY)).toBe('switch');
    const switched = switchSigning(s, begun + POLICY.distributionDelayMs);
    expect(switched.rotation.phase).toBe('overlap');
    expect(switched.signing).toEqual(next);
    expect(trustedRoots(switched)).toEqual([next.certPem, old.certPem]);
  });

  test('the old root leaves the bundle only after the longest leaf TTL has passed since the switch', () => {
    const switchedAt = T0 + 81 * DAY;
    const s = switchSigning(beginRotation(steadyState(old, T0), next, T0 + 80 * DAY), switchedAt);
    expect(nextAction(s, switchedAt + POLICY.maxLeafTtlMs - 1, POLICY)).toBe('none');
    expect(nextAction(s, switchedAt + POLICY.maxLeafTtlMs, POLICY)).toBe('finish');
    const done = settle(s, switchedAt + POLICY.maxLeafTtlMs, POLICY);
    expect(done.rotation.phase).toBe('steady');
    expect(trustedRoots(done)).toEqual([next.certPem]);
  });

  test('the overlap also covers one check interval, in which a replica that has not seen the switch still signs with the old root', () => {
    const switchedAt = T0 + 81 * DAY;
    const policy = { ...POLICY, checkIntervalMs: HOUR };
    const s = switchSigning(beginRotation(steadyState(old, T0), next, T0 + 80 * DAY), switchedAt);
    expect(nextAction(s, switchedAt + POLICY.maxLeafTtlMs + HOUR - 1, policy)).toBe('none');
    expect(nextAction(s, switchedAt + POLICY.maxLeafTtlMs + HOUR, policy)).toBe('finish');
  });

  test('an old root that expires first ends the overlap at its expiry: an expired root protects nobody', () => {
    const policy = { ...POLICY, maxLeafTtlMs: 90 * DAY };
    const s = switchSigning(beginRotation(steadyState(old, T0), next, T0 + 80 * DAY), T0 + 81 * DAY);
    expect(nextAction(s, T0 + ROOT_TTL - 1, policy)).toBe('none');
    expect(nextAction(s, T0 + ROOT_TTL, policy)).toBe('finish');
  });

  test('after a long outage the new root signs at once, and the old one stays trusted for a leaf TTL from then', () => {
    // Leaves the old root signed before the outage may still be in use: the overlap counts from now.
    const s = beginRotation(steadyState(old, T0), next, T0 + 80 * DAY);
    const later = T0 + 90 * DAY;
    const settled = settle(s, later, POLICY);
    expect(settled.rotation).toEqual({ phase: 'overlap', since: later, retiredCertPem: old.certPem });
    expect(settled.signing).toEqual(next);
    expect(settle(settled, later + POLICY.maxLeafTtlMs, POLICY).rotation).toEqual({
      phase: 'steady',
      since: later + POLICY.maxLeafTtlMs,
    });
  });

  test('a persisted record that is not one is refused with the reason', () => {
    expect(() => parseRotationRecord('{"phase":"later","since":1}', 'X')).toThrow('X: phase must be');
    expect(() => parseRotationRecord('{"phase":"distributing","since":1}', 'X')).toThrow('needs next.certPem');
    expect(() => parseRotationRecord('{"phase":"overlap","since":1}', 'X')).toThrow('needs retiredCertPem');
    expect(() => parseRotationRecord('nope', 'X')).toThrow('X: not JSON');
  });
});

describe('RootRotator over the --stateDir store', () => {
  let dir: string;
  let clock: number;
  let generated: RootPair[];
  let logs: ReturnType<typeof captureLogs>;
  const rotator = (store: LocalCaSecretStore) =>
    new RootRotator(store, {
      policy: POLICY,
      now: () => clock,
      generate: () => {
        const pair = generated.shift();
        if (!pair) throw new Error('the test has no more roots to hand out');
        return Promise.resolve(pair);
      },
    });
  const phaseLogs = () =>
    logs
      .lines()
      .filter((l) => String(l['msg']).startsWith('root rotation'))
      .map((l) => l['msg']);

  beforeEach(async () => {
    dir = tempDir('istiod-ts-rotation-');
    clock = T0;
    generated = [await root(T0 + 80 * DAY)];
    logs = captureLogs();
  });
  afterEach(() => {
    logs.restore();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a restart mid-rotation resumes it: the phase and both roots survive, and the key file is 0600', async () => {
    const old = await root(T0);
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    clock = T0 + 80 * DAY;
    const first = await rotator(store).check();
    expect(first.rotation.phase).toBe('distributing');
    expect(fs.statSync(path.join(dir, CA_ROTATION_FILE)).mode & 0o777).toBe(PRIVATE_FILE_MODE);

    // A new process: a new store and rotator over the same folder.
    const restarted = rotator(new LocalCaSecretStore(dir));
    const resumed = await restarted.check();
    expect(resumed).toEqual(first);
    clock += POLICY.distributionDelayMs;
    const switched = await restarted.check();
    expect(switched.rotation.phase).toBe('overlap');
    expect(trustedRoots(switched)).toEqual([first.rotation.next?.certPem, old.certPem]);
    // The istiod-layout files mirror the root that signs now.
    expect(fs.readFileSync(path.join(dir, CA_CERT_FILE), 'utf8')).toBe(first.rotation.next?.certPem);
    expect(fs.readFileSync(path.join(dir, CA_KEY_FILE), 'utf8')).toBe(first.rotation.next?.keyPem);
    expect(fs.statSync(path.join(dir, CA_KEY_FILE)).mode & 0o777).toBe(PRIVATE_FILE_MODE);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('.tmp-'))).toEqual([]);
  });

  test('a crash between the state file and its mirrors: the state file wins, and the next step rewrites the mirrors', async () => {
    const old = await root(T0);
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    clock = T0 + 80 * DAY;
    const r = rotator(store);
    await r.check();
    clock += POLICY.distributionDelayMs;
    const switched = await r.check();
    // As if the process died after writing the state file but before ca-cert.pem/ca-key.pem.
    fs.writeFileSync(path.join(dir, CA_CERT_FILE), old.certPem);
    fs.writeFileSync(path.join(dir, CA_KEY_FILE), old.keyPem);
    const reread = await new LocalCaSecretStore(dir).get();
    expect(reread?.caCertPem).toBe(switched.signing.certPem);
    expect(reread?.rotation?.phase).toBe('overlap');
    clock += POLICY.maxLeafTtlMs;
    await rotator(new LocalCaSecretStore(dir)).check();
    expect(fs.readFileSync(path.join(dir, CA_CERT_FILE), 'utf8')).toBe(switched.signing.certPem);
    expect(fs.readFileSync(path.join(dir, CA_KEY_FILE), 'utf8')).toBe(switched.signing.keyPem);
  });

  test('a root never rotated reads as the same state at every check: no listener call, no write', async () => {
    const old = await root(T0);
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    const r = rotator(store);
    let calls = 0;
    r.onState(() => calls++);
    for (const at of [1, 2, 3]) {
      clock = T0 + at * DAY;
      await r.check();
    }
    expect(calls).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual([CA_CERT_FILE, CA_KEY_FILE]);
  });

  test('each phase change is logged once, however often the clock is checked', async () => {
    const old = await root(T0);
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    const r = rotator(store);
    const heard: string[] = [];
    r.onState((s) => heard.push(s.rotation.phase));
    for (const at of [79, 80, 80.5, 81, 81.5, 83, 84]) {
      clock = T0 + at * DAY;
      await r.check();
      await r.check();
    }
    expect(heard).toEqual(['steady', 'distributing', 'overlap', 'steady']);
    expect(phaseLogs()).toEqual([
      'root rotation: new root distributed; the old root still signs',
      'root rotation: signing switched to the new root; the old root stays trusted',
      'root rotation: old root dropped from the trust bundle; rotation finished',
    ]);
  });

  test('a root already past its grace period at start begins a rotation at the first check', async () => {
    const old = await root(T0);
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    clock = T0 + 95 * DAY;
    const s = await rotator(store).check();
    expect(s.rotation.phase).toBe('distributing');
    expect(s.signing.certPem).toBe(old.certPem);
  });

  test('a root that expired while nothing ran is replaced at once, with no overlap to wait for', async () => {
    const old = await root(T0);
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    generated = [await root(T0 + 200 * DAY)];
    clock = T0 + 200 * DAY;
    const s = await rotator(store).check();
    expect(s.rotation.phase).toBe('steady');
    expect(trustedRoots(s)).toEqual([s.signing.certPem]);
    expect(s.signing.certPem).not.toBe(old.certPem);
    await expect(new LocalCaSecretStore(dir).get()).resolves.toMatchObject({ caCertPem: s.signing.certPem });
  });
});

describe('rotation settings (istiod names)', () => {
  test('defaults: check every hour, rotate in the last 20 % of the lifetime, distribute for 24 h first', () => {
    const { env } = parseServeOptions([], {});
    expect(env.CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL).toBe(HOUR);
    expect(env.CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE).toBe(20);
    expect(env.CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY).toBe(DAY);
  });

  test('a check interval of 0 is accepted (rotation off)', () => {
    expect(
      parseServeOptions([], { CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '0' }).env
        .CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL,
    ).toBe(0);
  });

  test.each([
    [{ CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '0' }, 'must be a percentage from 1 to 100'],
    [{ CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '101' }, 'must be a percentage from 1 to 100'],
    [{ CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '-1s' }, 'env CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL'],
    [
      { CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY: '-1h' },
      'env CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY',
    ],
  ])('bad env %j is a usage error naming the variable', (env, message) => {
    expect(() => parseServeOptions([], env)).toThrow(message);
  });
});
