// `explain --server` against servers that misbehave: a slow one and an endless one are cut off by
// the limits (EXPLAIN_SERVER_TIMEOUT_MS, MAX_EXPLAIN_RESPONSE_BYTES, made small here), something that is not
// istiod-ts is named as such; each is a failure (exit 1), not a bad question.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_EXPLAIN_RESPONSE_BYTES, explainRemotely, runExplainCommand } from '../../../src/cli/explain';
import { workloadQuery } from '../../../src/explain/query';

let server: http.Server;
let base: string;
const QUERY = workloadQuery('app/web');

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url?.includes('app%2Fslow') || req.url?.includes('app/slow')) return; // never answers
    if (req.url?.includes('app%2Fhuge') || req.url?.includes('app/huge')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('"');
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
      res.on('error', () => undefined);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>hello</html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('a server that does not answer within the timeout is given up on', async () => {
  await expect(
    explainRemotely(base, workloadQuery('app/slow'), { timeoutMs: 200, maxBytes: MAX_EXPLAIN_RESPONSE_BYTES }),
  ).rejects.toThrow(`cannot ask ${base}/debug/explain: no answer within 200 ms`);
});

test('an answer longer than the byte limit is cut off', async () => {
  await expect(
    explainRemotely(base, workloadQuery('app/huge'), { timeoutMs: 5000, maxBytes: 256 * 1024 }),
  ).rejects.toThrow('the answer is longer than 262144 bytes');
});

test('an answer that is not JSON says the server is not istiod-ts, exit 1', async () => {
  await expect(explainRemotely(base, QUERY)).rejects.toThrow('with a body that is not JSON (not istiod-ts?)');
  let err = '';
  const code = await runExplainCommand(
    ['workload', 'app/web', '--server', base],
    () => undefined,
    (s) => (err += s),
    {},
  );
  expect(code).toBe(1);
  expect(err.trimEnd().split('\n')).toHaveLength(1);
});
