// The HTTP/2 receive windows a Delta stream's connection advertises, read from a bare node:http2
// client: what a ztunnel's h2 client sees, and so how much of a large request it may send before
// waiting for the server.

import * as http2 from 'node:http2';
import {
  CONNECTION_RECEIVE_WINDOW_BYTES,
  STREAM_RECEIVE_WINDOW_BYTES,
  widenReceiveWindows,
} from '../../../src/xds/grpc/transport';
import { ADS_SERVICE, DELTA_METHOD } from '../../../src/xds/grpc/proto';
import { eventually } from '../../support/apiserver';
import { demoCache } from '../../support/xds/fake-cache';
import { SERVER_NAME } from '../../support/tls';
import { Harness, startHarness } from './fixtures/harness';

/** node:http2's own windows, the ones grpc-js leaves in place. */
const DEFAULT_WINDOW_BYTES = 65_535;

let harness: Harness | undefined;
let session: http2.ClientHttp2Session | undefined;

afterEach(async () => {
  session?.destroy();
  session = undefined;
  await harness?.close();
  harness = undefined;
});

function connect(h: Harness): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`https://127.0.0.1:${h.port}`, { ca: h.pki.caPem, servername: SERVER_NAME });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

function openDelta(s: http2.ClientHttp2Session): http2.ClientHttp2Stream {
  const stream = s.request({
    ':method': 'POST',
    ':path': `/${ADS_SERVICE}/${DELTA_METHOD}`,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => {});
  return stream;
}

/** Resolves once the server's settings say `initialWindowSize` is `size`. */
function windowSettled(s: http2.ClientHttp2Session, size: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (s.remoteSettings.initialWindowSize !== size) return;
      s.off('remoteSettings', check);
      resolve();
    };
    s.on('remoteSettings', check);
    check();
  });
}

test('the windows are wider than the 64 KiB node:http2 opens, the connection window at least a stream window', () => {
  expect(STREAM_RECEIVE_WINDOW_BYTES).toBeGreaterThan(DEFAULT_WINDOW_BYTES);
  expect(CONNECTION_RECEIVE_WINDOW_BYTES).toBeGreaterThanOrEqual(STREAM_RECEIVE_WINDOW_BYTES);
});

test('a Delta stream widens its connection to STREAM_RECEIVE_WINDOW_BYTES per stream and CONNECTION_RECEIVE_WINDOW_BYTES in all', async () => {
  harness = await startHarness(demoCache());
  session = await connect(harness);
  expect(session.remoteSettings.initialWindowSize).toBe(DEFAULT_WINDOW_BYTES);
  const settled = windowSettled(session, STREAM_RECEIVE_WINDOW_BYTES);
  openDelta(session);
  await settled;
  // The connection's WINDOW_UPDATE comes in the same write as the SETTINGS frame, but Node
  // reports no event for it: it is read from the session's state once the socket has been read.
  const s = session;
  await eventually('the connection window', () => s.state.remoteWindowSize === CONNECTION_RECEIVE_WINDOW_BYTES);
  expect(s.state.remoteWindowSize).toBe(CONNECTION_RECEIVE_WINDOW_BYTES);
});

test('a second stream on the same connection sends no second SETTINGS frame', async () => {
  harness = await startHarness(demoCache());
  session = await connect(harness);
  let settingsFrames = 0;
  session.on('remoteSettings', () => settingsFrames++);
  const settled = windowSettled(session, STREAM_RECEIVE_WINDOW_BYTES);
  openDelta(session);
  await settled;
  const before = settingsFrames;
  const second = openDelta(session);
  // The server has seen the second stream once it answers it (headers, then the auth failure).
  await new Promise<void>((resolve) => {
    second.once('response', () => resolve());
    second.once('close', () => resolve());
  });
  expect(settingsFrames).toBe(before);
  expect(session.remoteSettings.initialWindowSize).toBe(STREAM_RECEIVE_WINDOW_BYTES);
});

test('a call whose HTTP/2 session cannot be reached is left as it is', () => {
  expect(widenReceiveWindows({})).toBe('unreachable');
  expect(widenReceiveWindows({ call: { stream: { closed: false } } })).toBe('unreachable');
});
