// The shared report of objects the server does not act on: once per object and reason, cleared by
// its reporter, listed sorted and capped.

import { Registry } from 'prom-client';
import { logs } from '../../../src/log/logger';
import { IgnoredObjects, ignoredKey, MAX_IGNORED_LISTED, MAX_IGNORED_OBJECTS } from '../../../src/store/ignored';

let lines: string[];
beforeEach(() => {
  lines = [];
  logs.setDestination({ write: (line: string) => void lines.push(line) });
});
afterEach(() => logs.setDestination(process.stderr));

const counted = async (metrics: Registry): Promise<number> =>
  (await metrics.getSingleMetric('istiod_ts_ignored_objects_total')?.get())?.values[0]?.value ?? 0;

describe('IgnoredObjects', () => {
  test('an object is logged and counted once per reason; a new reason is a new report', async () => {
    const metrics = new Registry();
    const ignored = new IgnoredObjects({ metrics });
    const key = ignored.report('AuthorizationPolicy', 'ns/p', 'action PERMIT is not ALLOW, DENY or AUDIT');
    expect(ignored.report('AuthorizationPolicy', 'ns/p', 'action PERMIT is not ALLOW, DENY or AUDIT')).toBe(key);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('AuthorizationPolicy ns/p ignored: action PERMIT is not ALLOW, DENY or AUDIT');
    ignored.report('AuthorizationPolicy', 'ns/p', 'targets a waypoint, which this server does not serve');
    expect(lines).toHaveLength(2);
    expect(await counted(metrics)).toBe(2);
    expect(ignored.list().objects.map((o) => o.reason)).toEqual([
      'targets a waypoint, which this server does not serve',
    ]);
  });

  test('the log line starts with file:line when the object came from a file', () => {
    const ignored = new IgnoredObjects();
    ignored.report('Deployment', 'apps/web', 'not used', { file: 'apps.yaml', line: 12 });
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      level: 'warn',
      msg: 'apps.yaml:12: Deployment apps/web ignored: not used',
      kind: 'Deployment',
      name: 'apps/web',
      file: 'apps.yaml',
      line: 12,
    });
  });

  test('clear() takes an object off the list; reporting it again logs again', () => {
    const ignored = new IgnoredObjects();
    const key = ignored.report('Deployment', 'a/b', 'not used');
    expect(key).toBe(ignoredKey('Deployment', 'a/b'));
    expect(ignored.clear(key)).toBe(true);
    expect(ignored.list().total).toBe(0);
    ignored.report('Deployment', 'a/b', 'not used');
    expect(lines).toHaveLength(2);
  });

  test('the same object in two files is two entries', () => {
    const ignored = new IgnoredObjects();
    ignored.report('Deployment', 'a/b', 'not used', { file: 'one.yaml', line: 1 });
    ignored.report('Deployment', 'a/b', 'not used', { file: 'two.yaml', line: 1 });
    expect(ignored.list().total).toBe(2);
  });

  test(`a listing holds at most MAX_IGNORED_LISTED (${MAX_IGNORED_LISTED}) entries, sorted, with the total`, () => {
    const ignored = new IgnoredObjects();
    for (let i = MAX_IGNORED_LISTED + 9; i >= 0; i--)
      ignored.report('Deployment', `ns/d${String(i).padStart(4, '0')}`, 'not used');
    const listing = ignored.list();
    expect(listing.total).toBe(MAX_IGNORED_LISTED + 10);
    expect(listing.objects).toHaveLength(MAX_IGNORED_LISTED);
    expect(listing.objects[0]?.name).toBe('ns/d0000');
  });

  test(`past MAX_IGNORED_OBJECTS (${MAX_IGNORED_OBJECTS}) a report is still logged and counted, but not kept`, async () => {
    logs.setLevel('ignored', 'error'); // 10,000 log lines would only slow the test down
    try {
      const metrics = new Registry();
      const ignored = new IgnoredObjects({ metrics });
      for (let i = 0; i < MAX_IGNORED_OBJECTS + 3; i++) ignored.report('Deployment', `ns/d${i}`, 'not used');
      expect(ignored.list(0)).toEqual({ total: MAX_IGNORED_OBJECTS, notListed: 3, objects: [] });
      expect(await counted(metrics)).toBe(MAX_IGNORED_OBJECTS + 3);
    } finally {
      logs.setLevel('ignored', 'info');
    }
  });
});
