// A slow but working API server (istiod's timing, every call taking 6 s) still has a leader, and
// the leader does its work (the root-certificate ConfigMaps). Scaled down ten times: istiod's
// 30 s / 15 s / 7.5 s lease becomes 3 s / 1.5 s / 750 ms and each call takes 600 ms. Lock calls
// that keep failing are warnings (once per distinct error), not debug lines.

import { logs } from '../../../src/log/logger';
import { ROOT_CERT_KEY } from '../../../src/ca/roots/root-cert-publisher';
import { LEASE_NAMES, type LeaderTiming } from '../../../src/store/kube/leader';
import { lockCallTimeoutMs } from '../../../src/store/kube/leader-election';
import { eventually, type TestApiServer } from '../../support/apiserver';
import { startServer } from './helpers';
import {
  ROOT_CONFIGMAP,
  istiodTsReplica,
  rootCertPublisher,
  sleep,
  storeWithNamespaces,
  NS,
  type Replica,
} from './leader-fixtures';

const ISTIOD_SCALED: LeaderTiming = { leaseDurationMs: 3_000, renewDeadlineMs: 1_500, retryPeriodMs: 750 };
const CALL_MS = 600;

let server: TestApiServer;
let replica: Replica | undefined;
let logged: { level: string; scope: string; msg: string; problem?: string }[];

beforeEach(async () => {
  ({ server } = await startServer());
  logged = [];
  logs.setLevel('leader', 'warn');
  logs.setDestination({
    write: (line: string) => {
      logged.push(JSON.parse(line) as { level: string; scope: string; msg: string });
    },
  });
});

afterEach(async () => {
  logs.setDestination(process.stderr);
  server.delays.clear();
  await replica?.elector.stop();
  replica = undefined;
  await server.close();
});

test('with every call taking 6 s (scaled), a replica leads without a break and writes the root-cert ConfigMap', async () => {
  server.delays.add({ ms: CALL_MS });
  const store = storeWithNamespaces([NS, 'default']);
  const publish = rootCertPublisher(server, 'istiod-a', store, 'ROOT');
  replica = istiodTsReplica(server, 'istiod-a', {
    lock: LEASE_NAMES.namespaceController,
    timing: ISTIOD_SCALED,
    start: publish,
  });
  await eventually(
    'the root-cert ConfigMap is written',
    () =>
      (server.get('v1', 'ConfigMap', 'default', ROOT_CONFIGMAP)?.['data'] as Record<string, string> | undefined)?.[
        ROOT_CERT_KEY
      ] === 'ROOT',
    10_000,
  );
  // Several renewals later it still leads, and it never stopped in between.
  await sleep(4 * ISTIOD_SCALED.renewDeadlineMs);
  expect(replica.running()).toBe(true);
  expect(replica.events).toEqual(['start']);
});

test('a lock call may take up to the renew deadline, as client-go bounds one renewal', () => {
  expect(lockCallTimeoutMs(ISTIOD_SCALED)).toBe(ISTIOD_SCALED.renewDeadlineMs);
});

test('lock calls that keep timing out are logged as a warning once, not once per call', async () => {
  // Longer than any lock call may take: every try fails the same way.
  server.delays.add({ ms: 3_000 });
  replica = istiodTsReplica(server, 'istiod-a', { lock: LEASE_NAMES.namespaceController, timing: ISTIOD_SCALED });
  // At least two tries: each waits out the call limit, then up to 2.2 retry periods.
  await sleep(2 * (lockCallTimeoutMs(ISTIOD_SCALED) + ISTIOD_SCALED.retryPeriodMs * 2.2) + 500);
  const warnings = logged.filter((l) => l.scope === 'leader' && l.level === 'warn');
  expect(warnings).toHaveLength(1);
  expect(warnings[0]?.problem).toContain('no answer within');
  expect(replica.running()).toBe(false);
});
