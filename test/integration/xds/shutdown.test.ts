// Closing the xDS server ends every stream with OK, so each ztunnel reconnects at once (to another
// replica), including streams that had not finished connecting: one still being authenticated,
// and one authenticated that had not yet sent its first request.

import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { CallerIdentity } from '../../../src/server/context';
import { FakeAuthenticator } from '../../support/xds/fake-authenticator';
import { FakeCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from './fixtures/harness';
import { AUTHORIZATION_TYPE_URL, RESPONSE_WAIT_MS, TestZtunnel, ofType } from './fixtures/test-client';

/** An authenticator whose answers wait until the test lets them through. */
class HeldAuthenticator extends FakeAuthenticator {
  private readonly held: (() => void)[] = [];
  started = 0;

  override async authenticate(call: ServerSurfaceCall): Promise<CallerIdentity> {
    this.started++;
    await new Promise<void>((resolve) => this.held.push(resolve));
    return super.authenticate(call);
  }

  letThrough(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
}

let harness: Harness;
const clients: TestZtunnel[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await harness.close();
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

/** The stream's final status, or a failure naming what did not happen. */
async function finalStatus(zt: TestZtunnel): Promise<grpc.StatusObject> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`stream not ended within ${RESPONSE_WAIT_MS} ms of the server closing`)),
      RESPONSE_WAIT_MS,
    );
  });
  try {
    return await Promise.race([zt.client.status, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test('a stream still being authenticated when the server closes is ended with OK', async () => {
  const auth = new HeldAuthenticator();
  harness = await startHarness(new FakeCache(), {}, auth);
  const zt = new TestZtunnel(harness);
  clients.push(zt);
  await until(() => auth.started === 1);

  harness.xds.close();
  // Authentication finishing after the close must not bring the stream back to life.
  auth.letThrough();
  const status = await finalStatus(zt);
  expect(status.code).toBe(grpc.status.OK);
  expect(zt.received).toEqual([]);
  expect(harness.xds.streams.size).toBe(0);
});

test('an authenticated stream that has not sent its first request when the server closes is ended with OK', async () => {
  const auth = new FakeAuthenticator();
  harness = await startHarness(new FakeCache(), {}, auth);
  const zt = new TestZtunnel(harness, { initial: false });
  clients.push(zt);
  await until(() => auth.calls === 1);

  harness.xds.close();
  expect((await finalStatus(zt)).code).toBe(grpc.status.OK);
});

test('closing the server ends connected streams with OK', async () => {
  harness = await startHarness(new FakeCache());
  const zt = new TestZtunnel(harness);
  clients.push(zt);
  await zt.next(ofType(AUTHORIZATION_TYPE_URL));

  harness.xds.close();
  expect((await finalStatus(zt)).code).toBe(grpc.status.OK);
  expect(harness.xds.streams.size).toBe(0);
});
