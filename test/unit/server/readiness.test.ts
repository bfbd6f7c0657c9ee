import { ReadinessTracker } from '../../../src/server/readiness';
import { DebugRouter } from '../../../src/server/debug';
import { isLoopback } from '../../../src/server/http';

describe('readiness', () => {
  it('lists components not yet ready in registration order, then is ready', () => {
    const r = new ReadinessTracker();
    const store = r.register('store');
    const ca = r.register('ca');
    expect(r.notReady()).toEqual(['store', 'ca']);
    ca(true);
    expect(r.notReady()).toEqual(['store']);
    store(true);
    expect(r.isReady()).toBe(true);
  });

  it('a component can become unready again', () => {
    const r = new ReadinessTracker();
    const xds = r.register('xds');
    xds(true);
    xds(false);
    expect(r.notReady()).toEqual(['xds']);
  });

  it('a component not ready says what it still waits for', () => {
    const r = new ReadinessTracker();
    let waiting = ['kubernetes Pod', 'kubernetes Service'];
    const store = r.register('store', () => waiting);
    r.register('ca');
    expect(r.describeNotReady()).toEqual(['store (kubernetes Pod, kubernetes Service)', 'ca']);
    waiting = [];
    expect(r.describeNotReady()).toEqual(['store', 'ca']);
    store(true);
    expect(r.describeNotReady()).toEqual(['ca']);
  });

  it('a name is registered once', () => {
    const r = new ReadinessTracker();
    r.register('store');
    expect(() => r.register('store')).toThrow('already registered');
  });
});

describe('debug router', () => {
  const req = { path: '', query: new URLSearchParams(), method: 'GET', body: '' };

  it('the index lists every endpoint with its description', async () => {
    const d = new DebugRouter();
    d.add('syncz', 'connected clients', () => ({ body: [] }));
    d.add('mesh', 'meshConfig', () => ({ body: {} }));
    expect((await d.handle('', req)).body).toEqual({
      endpoints: [
        { path: '/debug/mesh', description: 'meshConfig' },
        { path: '/debug/syncz', description: 'connected clients' },
      ],
    });
  });

  it('an unknown endpoint is 404 pointing at the index', async () => {
    const out = await new DebugRouter().handle('nope', req);
    expect(out.status).toBe(404);
    expect(JSON.stringify(out.body)).toContain('/debug/');
  });

  it('endpoint names are unique', () => {
    const d = new DebugRouter();
    d.add('mesh', 'x', () => ({ body: 1 }));
    expect(() => d.add('mesh', 'y', () => ({ body: 2 }))).toThrow('already registered');
  });
});

describe('loopback callers', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.0.1', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['fe80::1', false],
    [undefined, false],
  ])('%s loopback=%s', (addr, expected) => expect(isLoopback(addr)).toBe(expected));
});
