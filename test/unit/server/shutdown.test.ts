// The drain under one deadline: every part starts at once, nobody waits for a slow neighbour,
// and what is still open at the deadline is forced and named.

import pino from 'pino';
import { drainWithin, ShutdownPart } from '../../../src/server/shutdown';
import { GrpcServers } from '../../../src/server/grpc';
import type { ServingCertificate, ServingCertSink } from '../../../src/server/context';
import { DEFAULT_SHUTDOWN_DURATION, parseServeOptions } from '../../../src/config/options';

const silent = pino({ level: 'silent' });

function manualPart(name: string, events: string[]): ShutdownPart & { finish(): void } {
  let finish: () => void = () => undefined;
  return {
    name,
    drain: () => {
      events.push(`drain ${name}`);
      return new Promise<void>((resolve) => (finish = resolve));
    },
    force: () => events.push(`force ${name}`),
    finish: () => finish(),
  };
}

describe('drainWithin', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('every part starts draining at once, in the order given, without waiting for the one before', async () => {
    const events: string[] = [];
    const parts = ['grpc', 'webhook', 'components'].map((n) => manualPart(n, events));
    const done = drainWithin(parts, 1000, silent);
    expect(events).toEqual(['drain grpc', 'drain webhook', 'drain components']);
    for (const p of parts) p.finish();
    await expect(done).resolves.toEqual({ forced: [] });
    expect(events.filter((e) => e.startsWith('force'))).toEqual([]);
  });

  test('a part still draining at the deadline is forced and named; the parts that finished are not forced', async () => {
    const events: string[] = [];
    const [grpc, webhook] = [manualPart('grpc', events), manualPart('webhook', events)];
    const done = drainWithin([grpc, webhook], 1000, silent);
    grpc.finish();
    await jest.advanceTimersByTimeAsync(1000);
    await expect(done).resolves.toEqual({ forced: ['webhook'] });
    expect(events).toEqual(['drain grpc', 'drain webhook', 'force webhook']);
  });

  test('a drain or a force that throws is logged and does not stop the others', async () => {
    const events: string[] = [];
    const broken: ShutdownPart = {
      name: 'broken',
      drain: () => {
        throw new Error('boom');
      },
    };
    const stuck: ShutdownPart = {
      name: 'stuck',
      drain: () => new Promise(() => undefined),
      force: () => {
        throw new Error('cannot force');
      },
    };
    const slow = manualPart('slow', events);
    const logged: { msg: string; part?: string }[] = [];
    const log = pino(
      { level: 'warn' },
      { write: (line: string) => logged.push(JSON.parse(line) as { msg: string; part?: string }) },
    );
    const done = drainWithin([broken, stuck, slow], 1000, log);
    await jest.advanceTimersByTimeAsync(1000);
    await expect(done).resolves.toEqual({ forced: ['stuck', 'slow'] });
    expect(events).toEqual(['drain slow', 'force slow']);
    expect(logged.map((l) => [l.msg, l.part])).toEqual([
      ['shutdown step failed', 'broken'],
      ['shutdown deadline reached; closing what is left', undefined],
      ['forced close failed', 'stuck'],
    ]);
  });
});

describe('--shutdownDuration', () => {
  test(`without the flag the drain window is istiod's ${DEFAULT_SHUTDOWN_DURATION}`, () => {
    expect(DEFAULT_SHUTDOWN_DURATION).toBe('10s');
    expect(parseServeOptions([], {}).flags.shutdownDuration).toBe(10_000);
  });

  test('takes a Go duration', () => {
    expect(parseServeOptions(['--shutdownDuration', '1m30s'], {}).flags.shutdownDuration).toBe(90_000);
  });
});

describe('GrpcServers during shutdown', () => {
  test('a secure port still waiting for its certificate does not bind once shutdown has begun', async () => {
    let release: (c: ServingCertificate) => void = () => undefined;
    const certs = {
      whenAvailable: () => new Promise<ServingCertificate>((r) => (release = r)),
    } as unknown as ServingCertSink;
    const servers = new GrpcServers(null, { host: '127.0.0.1', port: 0 }, {});
    const started = servers.startSecure(certs);
    servers.stopBinding();
    release({ certChainPem: '', privateKeyPem: '', rootsPem: '' });
    await expect(started).resolves.toBeUndefined();
  });
});
