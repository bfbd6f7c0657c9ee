// The Delta ADS contract with ztunnel, over TLS 1.3 + h2 with a client built from proto/xds.proto.

import * as grpc from '@grpc/grpc-js';
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors';
import { DeltaRequestFramer, STREAMED_REQUEST_MIN_BYTES } from '../../../src/xds/wire/request-stream';
import { FakeCache, demoCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from './fixtures/harness';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, TestZtunnel, ofType } from './fixtures/test-client';

const POD_A = 'Kubernetes//Pod/default/a';
const POD_B = 'Kubernetes//Pod/default/b';
const POD_C = 'Kubernetes//Pod/default/c';
const ECHO = 'default/echo.default.svc.cluster.local';

let cache: FakeCache;
let harness: Harness;
const clients: TestZtunnel[] = [];

function ztunnel(opts: ConstructorParameters<typeof TestZtunnel>[1] = {}): TestZtunnel {
  const c = new TestZtunnel(harness, opts);
  clients.push(c);
  return c;
}

beforeEach(async () => {
  cache = demoCache();
  harness = await startHarness(cache);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await harness.close();
});

describe('wildcard subscriptions', () => {
  test('a wildcard client receives every address and policy, Address before Authorization', async () => {
    const zt = ztunnel();
    const first = await zt.next();
    const second = await zt.next();
    expect(first.type_url).toBe(ADDRESS_TYPE_URL);
    expect(second.type_url).toBe(AUTHORIZATION_TYPE_URL);
    expect(zt.held.names(ADDRESS_TYPE_URL)).toEqual([ECHO, POD_A, POD_B, POD_C].sort());
    expect(zt.held.names(AUTHORIZATION_TYPE_URL)).toEqual(['default/allow-echo']);
    const pod = first.resources.find((r) => r.name === POD_A)!;
    expect(pod.version).toBe(cache.get(ADDRESS_TYPE_URL, POD_A)!.version);
    expect(pod.resource!.type_url).toBe(ADDRESS_TYPE_URL);
    expect(Buffer.from(pod.resource!.value)).toEqual(Buffer.from(cache.get(ADDRESS_TYPE_URL, POD_A)!.bytes));
  });

  test('the first request of each type is answered even when there is nothing to send', async () => {
    await harness.close();
    harness = await startHarness(new FakeCache());
    const zt = ztunnel();
    const address = await zt.next(ofType(ADDRESS_TYPE_URL));
    const authz = await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    expect(address.resources).toEqual([]);
    expect(authz.resources).toEqual([]);
    expect(address.nonce).not.toBe('');
    expect(authz.nonce).not.toBe('');
  });

  test('a pod added, changed and deleted reaches the client as an update and a removal', async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    const POD_D = 'Kubernetes//Pod/default/d';
    cache.setWorkload({ uid: POD_D, ip: '10.0.0.4', node: 'node-2' }).commit();
    const added = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(added.resources.map((r) => r.name)).toEqual([POD_D]);
    expect(added.removed_resources).toEqual([]);

    cache.setWorkload({ uid: POD_D, ip: '10.0.0.4', node: 'node-2', label: 'v2' }).commit();
    const changed = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(changed.resources.map((r) => [r.name, r.version])).toEqual([
      [POD_D, cache.get(ADDRESS_TYPE_URL, POD_D)!.version],
    ]);
    expect(changed.resources[0]!.version).not.toBe(added.resources[0]!.version);

    cache.delete(ADDRESS_TYPE_URL, POD_D).commit();
    const removed = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(removed.resources).toEqual([]);
    expect(removed.removed_resources).toEqual([POD_D]);
    expect(zt.held.names(ADDRESS_TYPE_URL)).not.toContain(POD_D);
  });

  test('a policy change is pushed as Authorization only', async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    cache.setPolicy('default', 'deny-all', { action: 'DENY' }).commit();
    const push = await zt.next();
    expect(push.type_url).toBe(AUTHORIZATION_TYPE_URL);
    expect(push.resources.map((r) => r.name)).toEqual(['default/deny-all']);
  });

  test('a request for a type the server does not serve is answered with an empty response', async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    const other = 'type.googleapis.com/istio.workload.Workload';
    zt.client.send({ type_url: other });
    const r = await zt.next(ofType(other));
    expect(r.resources).toEqual([]);
    expect(r.removed_resources).toEqual([]);
  });
});

describe('on-demand subscriptions', () => {
  async function onDemandClient(): Promise<TestZtunnel> {
    const zt = ztunnel({ onDemand: true, nodeName: 'node-2' });
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    return zt;
  }

  test('subscribe ["*"] with unsubscribe ["*"] starts with nothing but the workloads of the client node', async () => {
    const zt = ztunnel({ onDemand: true, nodeName: 'node-2' });
    const first = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(first.resources.map((r) => r.name)).toEqual([POD_B]);
  });

  test('a workload uid is answered under its own name', async () => {
    const zt = await onDemandClient();
    zt.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: [POD_A] });
    const r = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(r.resources.map((x) => x.name)).toContain(POD_A);
    expect(r.removed_resources).toEqual([]);
  });

  test('a network/ip key returns the workload and lists the key itself in removed_resources', async () => {
    const zt = await onDemandClient();
    zt.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['/10.0.0.3'] });
    const r = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(r.resources.map((x) => x.name)).toContain(POD_C);
    expect(r.removed_resources).toEqual(['/10.0.0.3']);
    expect(zt.held.names(ADDRESS_TYPE_URL)).toContain(POD_C);
  });

  test('a namespace/hostname key brings the service and its workloads', async () => {
    const zt = await onDemandClient();
    zt.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: [ECHO] });
    const r = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(r.resources.map((x) => x.name).sort()).toEqual(expect.arrayContaining([ECHO, POD_A, POD_B]));
    expect(r.removed_resources).toEqual([]);
  });

  test('an unknown name is answered in removed_resources', async () => {
    const zt = await onDemandClient();
    zt.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['/192.168.9.9'] });
    const r = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(r.removed_resources).toEqual(['/192.168.9.9']);
  });

  test('a watched workload that changes is pushed; an unwatched one is not', async () => {
    const zt = await onDemandClient();
    zt.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: [POD_A] });
    await zt.next(ofType(ADDRESS_TYPE_URL));
    cache.setWorkload({ uid: POD_C, ip: '10.0.0.3', node: 'node-1', label: 'unwatched' }).commit();
    cache.setWorkload({ uid: POD_A, ip: '10.0.0.1', node: 'node-1', label: 'watched' }).commit();
    const push = await zt.next(ofType(ADDRESS_TYPE_URL));
    expect(push.resources.map((x) => x.name)).toEqual([POD_A]);
  });
});

describe('reconnect with initial_resource_versions', () => {
  test('a reconnect against unchanged state sends zero resources', async () => {
    const first = ztunnel();
    await first.next(ofType(AUTHORIZATION_TYPE_URL));
    const versions = {
      [ADDRESS_TYPE_URL]: first.held.versions(ADDRESS_TYPE_URL),
      [AUTHORIZATION_TYPE_URL]: first.held.versions(AUTHORIZATION_TYPE_URL),
    };
    first.close();
    const again = ztunnel({ initialVersions: versions });
    const address = await again.next(ofType(ADDRESS_TYPE_URL));
    const authz = await again.next(ofType(AUTHORIZATION_TYPE_URL));
    expect(address.resources).toEqual([]);
    expect(address.removed_resources).toEqual([]);
    expect(authz.resources).toEqual([]);
  });

  test('on reconnect, changed names are sent and vanished names are removed', async () => {
    const first = ztunnel();
    await first.next(ofType(AUTHORIZATION_TYPE_URL));
    const versions = { [ADDRESS_TYPE_URL]: first.held.versions(ADDRESS_TYPE_URL) };
    first.close();
    cache.setWorkload({ uid: POD_A, ip: '10.0.0.1', node: 'node-1', label: 'changed' });
    cache.delete(ADDRESS_TYPE_URL, POD_B).commit();
    const again = ztunnel({ initialVersions: versions });
    const address = await again.next(ofType(ADDRESS_TYPE_URL));
    expect(address.resources.map((r) => r.name)).toEqual([POD_A]);
    expect(address.removed_resources).toEqual([POD_B]);
  });
});

describe('reconnect with held versions large enough to be read as they arrive (request-stream.ts)', () => {
  /** Enough pods that the reconnect's Address request is over STREAMED_REQUEST_MIN_BYTES. */
  const PODS = 2_000;
  const podName = (i: number) => `Kubernetes//Pod/default/many-${i}`;

  beforeEach(() => {
    for (let i = 0; i < PODS; i++)
      cache.setWorkload({ uid: podName(i), ip: `10.1.${i >> 8}.${i & 255}`, node: `node-${i % 3}` });
    cache.commit();
  });

  async function heldAfterSync(): Promise<Record<string, string>> {
    const first = ztunnel();
    await first.next(ofType(AUTHORIZATION_TYPE_URL));
    const versions = first.held.versions(ADDRESS_TYPE_URL);
    first.close();
    expect(JSON.stringify(versions).length).toBeGreaterThan(STREAMED_REQUEST_MIN_BYTES);
    return versions;
  }

  test('the framer reads the request in place of grpc-js, and an unchanged reconnect gets nothing', async () => {
    const versions = await heldAfterSync();
    const streamed = jest.spyOn(DeltaRequestFramer.prototype, 'write');
    try {
      const again = ztunnel({ initialVersions: { [ADDRESS_TYPE_URL]: versions } });
      const address = await again.next(ofType(ADDRESS_TYPE_URL));
      expect(address.resources).toEqual([]);
      expect(address.removed_resources).toEqual([]);
      expect(streamed).toHaveBeenCalled();
    } finally {
      streamed.mockRestore();
    }
  });

  test("grpc-js's handleDataFrame runs per message, not per DATA chunk", async () => {
    const versions = await heldAfterSync();
    const chunks = jest.spyOn(DeltaRequestFramer.prototype, 'write');
    const frames = jest.spyOn(
      BaseServerInterceptingCall.prototype as unknown as { handleDataFrame(data: Buffer): void },
      'handleDataFrame',
    );
    try {
      const again = ztunnel({ initialVersions: { [ADDRESS_TYPE_URL]: versions } });
      await again.next(ofType(AUTHORIZATION_TYPE_URL));
      // The Address request alone is several 16 KiB DATA frames; two messages were delivered.
      expect(chunks.mock.calls.length).toBeGreaterThan(4);
      expect(frames.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(frames.mock.calls.length).toBeLessThan(chunks.mock.calls.length);
    } finally {
      chunks.mockRestore();
      frames.mockRestore();
    }
  });

  test('a request over the receive limit still ends the call RESOURCE_EXHAUSTED', async () => {
    // grpc-js's default limit is 4 MiB: 5,000 names of 900 bytes.
    const huge: Record<string, string> = {};
    for (let i = 0; i < 5_000; i++) huge[`${i}-${'x'.repeat(900)}`] = 'v';
    const again = ztunnel({ initialVersions: { [ADDRESS_TYPE_URL]: huge } });
    const status = await again.client.status;
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toContain('Received message larger than max');
  });

  test('changed names are sent and vanished names removed, as with a small request', async () => {
    const versions = await heldAfterSync();
    cache.setWorkload({ uid: podName(7), ip: '10.1.0.7', node: 'node-1', label: 'changed' });
    cache.delete(ADDRESS_TYPE_URL, podName(8)).commit();
    const again = ztunnel({ initialVersions: { [ADDRESS_TYPE_URL]: versions } });
    const address = await again.next(ofType(ADDRESS_TYPE_URL));
    expect(address.resources.map((r) => r.name)).toEqual([podName(7)]);
    expect(address.removed_resources).toEqual([podName(8)]);
  });
});

describe('ACK and NACK', () => {
  test('a NACK (error_detail with code 0) is counted, shown in syncz and the version is not resent', async () => {
    const zt = ztunnel({
      review: (r) => (r.type_url === ADDRESS_TYPE_URL ? `${POD_A}: unsupported field` : undefined),
    });
    const nacked = await zt.next(ofType(ADDRESS_TYPE_URL));
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    // A later change still flows: the server goes on, it only does not resend what was rejected.
    cache.setPolicy('default', 'later').commit();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    await zt.sync();
    const addressResponses = zt.received.filter((r) => r.type_url === ADDRESS_TYPE_URL);
    expect(addressResponses).toEqual([nacked]);
    const rejects = await harness.metrics.getSingleMetric('pilot_total_xds_rejects')!.get();
    expect(rejects.values.find((v) => v.labels['type'] === 'address')?.value).toBe(1);
    const entry = harness.xds.debugSyncz().clients[0]!;
    const address = entry.types.find((t) => t.typeUrl === ADDRESS_TYPE_URL)!;
    expect(address.lastNack).toMatchObject({ nonce: nacked.nonce, message: `${POD_A}: unsupported field` });
  });

  test('a request with a stale nonce is ignored', async () => {
    const zt = ztunnel({ manualAck: true });
    const first = await zt.next(ofType(ADDRESS_TYPE_URL));
    zt.client.ack(first);
    cache.setWorkload({ uid: POD_A, ip: '10.0.0.1', node: 'node-1', label: 'x' }).commit();
    const second = await zt.next(ofType(ADDRESS_TYPE_URL));
    // An answer to the superseded first response, even with a subscription change, is dropped.
    zt.client.send({
      type_url: ADDRESS_TYPE_URL,
      response_nonce: first.nonce,
      resource_names_subscribe: ['/10.0.0.3'],
    });
    zt.client.ack(second);
    await zt.sync();
    const entry = harness.xds.debugSyncz().clients[0]!;
    const address = entry.types.find((t) => t.typeUrl === ADDRESS_TYPE_URL)!;
    expect(address.lastAck?.nonce).toBe(second.nonce);
    expect(zt.received.filter((r) => r.type_url === ADDRESS_TYPE_URL)).toHaveLength(2);
  });
});

describe('authentication and the node', () => {
  test('a stream with a wrong token ends with UNAUTHENTICATED', async () => {
    const zt = ztunnel({ token: 'forged' });
    const status = await zt.client.status;
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(zt.received).toEqual([]);
  });

  test('a stream without a token ends with UNAUTHENTICATED', async () => {
    const zt = ztunnel({ token: undefined });
    expect((await zt.client.status).code).toBe(grpc.status.UNAUTHENTICATED);
  });

  test('a first request without node id ends with INVALID_ARGUMENT', async () => {
    const zt = ztunnel({ nodeId: '' });
    const status = await zt.client.status;
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toContain('node id');
  });

  test('node metadata NAMESPACE other than the caller namespace is refused by the identity check', async () => {
    const zt = ztunnel({ namespace: 'default' });
    expect((await zt.client.status).code).toBe(grpc.status.PERMISSION_DENIED);
  });

  test('with XDS_AUTH off a stream needs no credentials', async () => {
    await harness.close();
    harness = await startHarness(cache, { auth: false });
    const zt = ztunnel({ token: undefined });
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    expect(zt.held.names(ADDRESS_TYPE_URL)).toHaveLength(4);
  });

  test('syncz shows the node, identity and per-type state of each client', async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    const [entry] = harness.xds.debugSyncz().clients;
    expect(entry).toMatchObject({
      node: 'ztunnel~10.0.0.100~ztunnel-abc.istio-system~istio-system.svc.cluster.local',
      nodeName: 'node-1',
      identity: ['spiffe://cluster.local/ns/istio-system/sa/ztunnel'],
    });
    expect(entry!.types.map((t) => [t.typeUrl, t.wildcard])).toEqual([
      [ADDRESS_TYPE_URL, true],
      [AUTHORIZATION_TYPE_URL, true],
    ]);
  });

  test("metrics use istiod's names: connected clients and responses by type, convergence on ACK", async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    cache.setPolicy('default', 'p2').commit();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    await zt.sync();
    const value = async (name: string, type?: string) => {
      const m = await harness.metrics.getSingleMetric(name)!.get();
      const v = m.values.find((x) => type === undefined || x.labels['type'] === type);
      return v?.value;
    };
    expect(await value('pilot_xds', 'address')).toBe(1);
    expect(await value('pilot_xds', 'authorization')).toBe(1);
    expect(await value('pilot_xds_pushes', 'address')).toBe(1);
    expect(await value('pilot_xds_pushes', 'authorization')).toBe(2);
    const exposition = await harness.metrics.metrics();
    expect(exposition).toMatch(/^pilot_proxy_convergence_time_count 1$/m);
    zt.close();
    while ((await value('pilot_xds', 'address')) !== 0) await new Promise((r) => setTimeout(r, 10));
  });
});
