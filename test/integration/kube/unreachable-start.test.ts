// An API server that does not answer at start-up is a wait, not an exit: in a cluster an exit is
// CrashLoopBackOff. The server stays up and not ready, says why on /ready, and carries on once
// the API server answers.

import { TestApiServer, eventually } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { API_SERVER_READINESS } from '../../../src/server/source';
import { readyAt, startServing, type InProcessServer } from './serve-fixture';

let api: TestApiServer;
let server: InProcessServer | undefined;

beforeEach(async () => {
  api = await TestApiServer.start();
  api.put(namespace('istio-system'));
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await api.close();
});

test('an API server that refuses connections at start keeps the server up and not ready, saying why, until it answers', async () => {
  const outage = api.unreachableFor(3_000);
  const { httpAddress, started } = await startServing(api);
  let failed: unknown;
  started.catch((err: unknown) => (failed = err));
  await eventually('/ready names the API server and the error', async () => {
    const ready = await readyAt(httpAddress).catch(() => undefined);
    return (
      ready !== undefined &&
      ready.status === 503 &&
      ready.body.includes(API_SERVER_READINESS) &&
      ready.body.includes(`cannot reach the Kubernetes API server at ${api.url}`)
    );
  });
  await outage;
  server = await started;
  expect(failed).toBeUndefined();
  await eventually(
    'the server becomes ready once the API server answers',
    async () => {
      return (await readyAt(httpAddress)).status === 200;
    },
    20_000,
  );
});
