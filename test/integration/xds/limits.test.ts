// Every per-stream limit of the xDS server, as a client would run into it.

import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { CallAuthenticator, CallerIdentity } from '../../../src/server/context';
import {
  MAX_REQUESTS_BEFORE_AUTH,
  MAX_TYPES_PER_STREAM,
  MAX_WATCHED_NAMES,
} from '../../../src/xds/protocol/delta-stream';
import { SYNCZ_MAX_NAMES } from '../../../src/xds/debug/syncz';
import { demoCache } from '../../support/xds/fake-cache';
import { FakeAuthenticator } from '../../support/xds/fake-authenticator';
import { Harness, startHarness } from './fixtures/harness';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, TestZtunnel, ofType } from './fixtures/test-client';

let harness: Harness;
const clients: TestZtunnel[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await harness.close();
});

async function connected(): Promise<TestZtunnel> {
  const zt = new TestZtunnel(harness);
  clients.push(zt);
  await zt.next(ofType(AUTHORIZATION_TYPE_URL));
  return zt;
}

test(`a stream may subscribe to at most MAX_TYPES_PER_STREAM (${MAX_TYPES_PER_STREAM}) type URLs`, async () => {
  harness = await startHarness(demoCache());
  const zt = await connected();
  for (let i = 0; i < MAX_TYPES_PER_STREAM - 1; i++) zt.client.send({ type_url: `type.googleapis.com/test.T${i}` });
  const status = await zt.client.status;
  expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(status.details).toContain(`more than ${MAX_TYPES_PER_STREAM} type URLs`);
  expect(zt.received.filter((r) => r.type_url.startsWith('type.googleapis.com/test.'))).toHaveLength(
    MAX_TYPES_PER_STREAM - 2,
  );
});

test(`a stream may watch at most MAX_WATCHED_NAMES (${MAX_WATCHED_NAMES}) explicit names per type`, async () => {
  harness = await startHarness(demoCache());
  const zt = new TestZtunnel(harness, { onDemand: true });
  clients.push(zt);
  await zt.next(ofType(AUTHORIZATION_TYPE_URL));
  const names = Array.from({ length: MAX_WATCHED_NAMES + 1 }, (_, i) => `/10.9.${i >> 8}.${i & 255}`);
  zt.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: names });
  const status = await zt.client.status;
  expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(status.details).toContain(`more than ${MAX_WATCHED_NAMES} names watched`);
});

test(`syncz lists at most SYNCZ_MAX_NAMES (${SYNCZ_MAX_NAMES}) subscriptions per type`, async () => {
  harness = await startHarness(demoCache());
  const zt = new TestZtunnel(harness, { onDemand: true });
  clients.push(zt);
  await zt.next(ofType(AUTHORIZATION_TYPE_URL));
  zt.client.send({
    type_url: ADDRESS_TYPE_URL,
    resource_names_subscribe: Array.from({ length: SYNCZ_MAX_NAMES * 2 }, (_, i) => `ns/host-${i}`),
  });
  await zt.next(ofType(ADDRESS_TYPE_URL));
  const address = harness.xds.debugSyncz().clients[0]!.types.find((t) => t.typeUrl === ADDRESS_TYPE_URL)!;
  expect(address.subscriptions).toHaveLength(SYNCZ_MAX_NAMES);
});

/** Holds every authentication until released, so requests pile up meanwhile. */
class HeldAuthenticator implements CallAuthenticator {
  private readonly inner = new FakeAuthenticator();
  private waiting: (() => void)[] = [];
  started = 0;
  authenticate(call: ServerSurfaceCall): Promise<CallerIdentity> {
    this.started++;
    return new Promise((resolve, reject) =>
      this.waiting.push(() => void this.inner.authenticate(call).then(resolve, reject)),
    );
  }
  release(): void {
    for (const w of this.waiting.splice(0)) w();
  }
}

test(`at most MAX_REQUESTS_BEFORE_AUTH (${MAX_REQUESTS_BEFORE_AUTH}) requests are held while authentication runs`, async () => {
  const auth = new HeldAuthenticator();
  harness = await startHarness(demoCache(), {}, auth);
  const zt = new TestZtunnel(harness);
  clients.push(zt);
  for (let i = 0; i < MAX_REQUESTS_BEFORE_AUTH; i++) zt.client.send({ type_url: `type.googleapis.com/test.T${i}` });
  const status = await zt.client.status;
  expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(auth.started).toBe(1);
  auth.release();
});

test('requests sent while authentication runs are handled in order once it succeeds', async () => {
  const auth = new HeldAuthenticator();
  harness = await startHarness(demoCache(), {}, auth);
  const zt = new TestZtunnel(harness);
  clients.push(zt);
  while (auth.started === 0) await new Promise((r) => setTimeout(r, 5));
  auth.release();
  const first = await zt.next();
  const second = await zt.next();
  expect([first.type_url, second.type_url]).toEqual([ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL]);
});
