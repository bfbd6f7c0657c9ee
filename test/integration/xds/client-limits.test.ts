// Client strings over their limits end the stream with INVALID_ARGUMENT naming the field and the
// limit; the server keeps serving everyone else, and its logs never carry a client string whole.

import * as grpc from '@grpc/grpc-js';
import { Writable } from 'node:stream';
import { logs } from '../../../src/log/logger';
import { CLIENT_TEXT_LOG_CHARS, MAX_ERROR_DETAIL_BYTES, MAX_NODE_ID_BYTES } from '../../../src/xds/wire/client-limits';
import { demoCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from './fixtures/harness';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, TestZtunnel, ofType } from './fixtures/test-client';

let harness: Harness;
const clients: TestZtunnel[] = [];
let logged: string[] = [];

beforeEach(() => {
  logged = [];
  logs.setDestination(
    new Writable({
      write: (chunk: Buffer, _enc, done) => {
        logged.push(chunk.toString());
        done();
      },
    }),
  );
  logs.setLevel('xds', 'info');
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await harness.close();
  logs.setLevel('xds', process.env['XDS_TEST_LOGS'] ?? 'silent');
});

/** No log line holds a run of `char` longer than the logs may show of a client string. */
function expectLogsTruncate(char: string): void {
  expect(logged.length).toBeGreaterThan(0);
  // A boolean, so that a failure does not print the very line it complains about.
  const whole = logged.filter((line) => line.includes(char.repeat(CLIENT_TEXT_LOG_CHARS + 1)));
  expect(whole.map((l) => l.length)).toEqual([]);
}

test('a 100,000-character node id gets INVALID_ARGUMENT naming MAX_NODE_ID_BYTES, and others keep being served', async () => {
  harness = await startHarness(demoCache());
  const bad = new TestZtunnel(harness, {
    nodeId: `ztunnel~10.0.0.1~${'p'.repeat(100_000)}.istio-system~istio-system.svc.cluster.local`,
  });
  clients.push(bad);
  const status = await bad.client.status;
  expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(status.details).toContain('node.id');
  expect(status.details).toContain(`MAX_NODE_ID_BYTES`);
  expect(status.details).toContain(String(MAX_NODE_ID_BYTES));
  expect(status.details.length).toBeLessThan(200);
  expect(bad.received).toEqual([]);

  const good = new TestZtunnel(harness);
  clients.push(good);
  await good.next(ofType(AUTHORIZATION_TYPE_URL));
  expectLogsTruncate('p');
});

test('a NACK message longer than MAX_ERROR_DETAIL_BYTES ends the stream; a long one within it is logged truncated', async () => {
  harness = await startHarness(demoCache());
  const zt = new TestZtunnel(harness, { manualAck: true });
  clients.push(zt);
  const address = await zt.next(ofType(ADDRESS_TYPE_URL));
  zt.client.ack(address, 'm'.repeat(10_000));
  await zt.sync();
  expect(logged.some((l) => l.includes('NACK'))).toBe(true);
  expectLogsTruncate('m');
  const nack = harness.xds.debugSyncz().clients[0]!.types.find((t) => t.typeUrl === ADDRESS_TYPE_URL)!.lastNack!;
  expect(nack.message.length).toBeLessThan(CLIENT_TEXT_LOG_CHARS + 100);

  zt.client.ack(address, 'm'.repeat(MAX_ERROR_DETAIL_BYTES + 1));
  const status = await zt.client.status;
  expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(status.details).toContain('MAX_ERROR_DETAIL_BYTES');
});
