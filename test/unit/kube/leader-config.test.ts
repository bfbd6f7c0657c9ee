import {
  DEFAULT_LEADER_TIMING,
  LEASE_LOCKED_ELECTIONS,
  LEASE_NAMES,
  lockKindOf,
  validateTiming,
} from '../../../src/store/kube/leader';
import { ACQUIRE_JITTER } from '../../../src/store/kube/leader-election';
import {
  DEFAULT_TAG_SERVICE,
  DEFAULT_TAG_WEBHOOK,
  WebhookDefaultRevision,
} from '../../../src/store/kube/leader-default-revision';

describe('lock kinds, as istiod takes them', () => {
  test.each([
    [LEASE_NAMES.namespaceController, 'ConfigMap'],
    [LEASE_NAMES.validationController, 'ConfigMap'],
    [LEASE_NAMES.nodeUntaint, 'ConfigMap'],
    [LEASE_NAMES.ipAutoallocate, 'ConfigMap'],
    [LEASE_NAMES.status, 'Lease'],
  ])('%s is a %s lock', (name, kind) => {
    expect(lockKindOf(name)).toBe(kind);
  });

  test('only the status election is a Lease (istiod NewLeaseLeaderElection)', () => {
    expect([...LEASE_LOCKED_ELECTIONS]).toEqual(['istio-status-leader']);
  });
});

describe('timing', () => {
  test("the defaults are istiod's: 30 s lease, renew deadline half of it, retry a quarter", () => {
    expect(DEFAULT_LEADER_TIMING).toEqual({ leaseDurationMs: 30_000, renewDeadlineMs: 15_000, retryPeriodMs: 7_500 });
    expect(() => validateTiming(DEFAULT_LEADER_TIMING)).not.toThrow();
  });

  test("client-go's jitter factor bounds the retry period against the renew deadline", () => {
    expect(ACQUIRE_JITTER).toBe(1.2);
    expect(() => validateTiming({ leaseDurationMs: 3_000, renewDeadlineMs: 1_200, retryPeriodMs: 1_000 })).toThrow(
      /renew deadline \(1200 ms\) must exceed 1.2 x retry period \(1000 ms\)/,
    );
  });

  test.each([0, -1, Number.NaN])('a non-positive or missing value (%p) is refused, naming it', (bad) => {
    expect(() => validateTiming({ ...DEFAULT_LEADER_TIMING, retryPeriodMs: bad })).toThrow(
      /retryPeriodMs .* must be a positive number/,
    );
  });
});

describe('the default revision', () => {
  function reader(label: string | undefined, cacheMs: number) {
    const gets: string[] = [];
    const writer = {
      get: (ref: { name: string }) => {
        gets.push(ref.name);
        return Promise.resolve(
          label === undefined ? undefined : { metadata: { name: ref.name, labels: { 'istio.io/rev': label } } },
        );
      },
    };
    return { gets, source: new WebhookDefaultRevision(writer as never, cacheMs) };
  }

  test('is the istio.io/rev label of istio-revision-tag-default', async () => {
    const { gets, source } = reader('canary', 1_000);
    expect(await source.current()).toBe('canary');
    expect(gets).toEqual([DEFAULT_TAG_WEBHOOK]);
  });

  test("without the webhook, is the istio.io/rev label of the default tag's Service in the system namespace", async () => {
    const gets: string[] = [];
    const writer = {
      get: (ref: { name: string; namespace?: string; plural: string }) => {
        gets.push(`${ref.plural}/${ref.namespace ?? ''}/${ref.name}`);
        return Promise.resolve(
          ref.plural === 'services'
            ? { metadata: { name: ref.name, labels: { 'istio.io/rev': 'stable' } } }
            : undefined,
        );
      },
    };
    const source = new WebhookDefaultRevision(writer as never, 1_000, {}, 'istio-system');
    expect(await source.current()).toBe('stable');
    expect(gets).toEqual([
      `mutatingwebhookconfigurations//${DEFAULT_TAG_WEBHOOK}`,
      `services/istio-system/${DEFAULT_TAG_SERVICE}`,
    ]);
  });

  test('is empty without that webhook', async () => {
    expect(await reader(undefined, 1_000).source.current()).toBe('');
  });

  test('is read at most once per cache period, however many elections ask', async () => {
    const { gets, source } = reader('default', 60_000);
    await Promise.all([source.current(), source.current(), source.current()]);
    await source.current();
    expect(gets).toHaveLength(1);
  });

  test('keeps the last answer when a read fails', async () => {
    let fail = false;
    const writer = {
      get: () =>
        fail
          ? Promise.reject(new Error('forbidden'))
          : Promise.resolve({ metadata: { name: DEFAULT_TAG_WEBHOOK, labels: { 'istio.io/rev': 'default' } } }),
    };
    const source = new WebhookDefaultRevision(writer as never, 0);
    expect(await source.current()).toBe('default');
    fail = true;
    expect(await source.current()).toBe('default');
  });
});
