// startXdsServer's contract with the process wiring: where it registers, what it exposes, and
// what it reacts to.

import type * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { parseServeOptions } from '../../../src/config/options';
import type { MeshConfig, MeshConfigSource } from '../../../src/mesh/types';
import type { DebugResponse, GrpcPorts, ServerContext } from '../../../src/server/context';
import { ADS_SERVICE, DELTA_METHOD, SOTW_METHOD } from '../../../src/xds/grpc/proto';
import { XdsServer, startXdsServer } from '../../../src/xds/server';
import { demoCache } from '../../support/xds/fake-cache';
import { FakeAuthenticator } from '../../support/xds/fake-authenticator';

function fakeContext() {
  const services: { service: grpc.ServiceDefinition; ports: GrpcPorts }[] = [];
  const debug = new Map<string, () => DebugResponse | Promise<DebugResponse>>();
  const meshListeners: ((m: MeshConfig, p: MeshConfig) => void)[] = [];
  const shutdown: (() => void | Promise<void>)[] = [];
  const mesh: MeshConfig = {
    trustDomain: 'cluster.local',
    trustDomainAliases: [],
    rootNamespace: 'istio-system',
    defaultConfig: {},
  };
  const meshSource: MeshConfigSource = {
    current: () => mesh,
    subscribe: (l) => {
      meshListeners.push(l);
      return () => meshListeners.splice(meshListeners.indexOf(l), 1);
    },
  };
  const ctx = {
    options: parseServeOptions([], { PILOT_DEBOUNCE_AFTER: '0s' }),
    metrics: new Registry(),
    mesh: meshSource,
    grpc: {
      addService: (service: grpc.ServiceDefinition, _impl: unknown, ports: GrpcPorts) =>
        services.push({ service, ports }),
      secureEnabled: true,
    },
    debug: {
      add: (name: string, _d: string, handler: () => DebugResponse | Promise<DebugResponse>) =>
        debug.set(name, handler),
    },
    onShutdown: (hook: () => void | Promise<void>) => shutdown.push(hook),
  } as unknown as ServerContext;
  return { ctx, services, debug, meshListeners, shutdown, mesh };
}

test('the ADS service is registered on both gRPC ports with the delta method', () => {
  const f = fakeContext();
  startXdsServer(f.ctx, demoCache(), new FakeAuthenticator());
  expect(f.services).toHaveLength(1);
  expect(f.services[0]!.ports).toBe('both');
  expect(f.services[0]!.service[DELTA_METHOD]!.path).toBe(`/${ADS_SERVICE}/${DELTA_METHOD}`);
});

test('the State-of-the-World method is registered on both gRPC ports beside the delta method', () => {
  const f = fakeContext();
  startXdsServer(f.ctx, demoCache(), new FakeAuthenticator());
  expect(f.services[0]!.service[SOTW_METHOD]!.path).toBe(`/${ADS_SERVICE}/${SOTW_METHOD}`);
});

test("/debug/syncz is registered in istiod's shape: a list of per-proxy sync states", () => {
  const f = fakeContext();
  startXdsServer(f.ctx, demoCache(), new FakeAuthenticator());
  const handler = f.debug.get('syncz') as unknown as (req: { query: URLSearchParams }) => DebugResponse;
  expect(handler({ query: new URLSearchParams() }).body).toEqual([]);
});

test('/debug/ztunnels is registered and lists connected clients and full-sync slots', async () => {
  const f = fakeContext();
  startXdsServer(f.ctx, demoCache(), new FakeAuthenticator());
  const res = await f.debug.get('ztunnels')!();
  expect(res.body).toMatchObject({ clients: [], fullSyncs: { active: 0, queued: 0 } });
});

test('a meshConfig change asks for a full push; shutdown stops listening and closes the server', async () => {
  const f = fakeContext();
  const fullPush = jest.spyOn(XdsServer.prototype, 'fullPush');
  const close = jest.spyOn(XdsServer.prototype, 'close');
  startXdsServer(f.ctx, demoCache(), new FakeAuthenticator());
  f.meshListeners[0]!(f.mesh, f.mesh);
  expect(fullPush).toHaveBeenCalledTimes(1);
  for (const hook of f.shutdown) await hook();
  expect(close).toHaveBeenCalled();
  expect(f.meshListeners).toHaveLength(0);
  fullPush.mockRestore();
  close.mockRestore();
});

test("metrics are registered on the server's registry under istiod's names, and istioctl's debug requests by outcome", async () => {
  const f = fakeContext();
  startXdsServer(f.ctx, demoCache(), new FakeAuthenticator());
  const names = (await f.ctx.metrics.getMetricsAsJSON()).map((m) => m.name).sort();
  expect(names).toEqual([
    'istiod_ts_grpc_hook_fallbacks_total',
    'istiod_ts_xds_debug_requests_total',
    'pilot_proxy_convergence_time',
    'pilot_total_xds_rejects',
    'pilot_xds',
    'pilot_xds_push_time',
    'pilot_xds_pushes',
    'pilot_xds_send_time',
  ]);
});
