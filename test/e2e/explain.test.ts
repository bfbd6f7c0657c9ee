// `istiod-ts explain` spawned as a user runs it on the demo mesh: the verdict on stdout with nothing
// else on stderr, the exit status saying allowed (0) or denied (1), and a bad question one line (2).

import { DEMO, runCli } from '../support/cli';

const PRODUCTPAGE_ID = 'spiffe://cluster.local/ns/bookinfo/sa/bookinfo-productpage';
const RATINGS_ID = 'spiffe://cluster.local/ns/bookinfo/sa/bookinfo-ratings';

describe('istiod-ts explain, spawned', () => {
  it('an identity with a pod on the node is allowed: exit 0, the verdict on stdout, stderr empty', () => {
    const r = runCli(['explain', 'identity', '--configDir', DEMO, '--node', 'node-a', '--identity', PRODUCTPAGE_ID]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`identity ${PRODUCTPAGE_ID} for a ztunnel on node node-a: ALLOWED`);
  });

  it('an identity whose pod runs on another node is denied: exit 1, the JSON record names the reason', () => {
    const r = runCli([
      'explain',
      'identity',
      '--configDir',
      DEMO,
      '--node',
      'node-a',
      '--identity',
      RATINGS_ID,
      '-o',
      'json',
    ]);
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'identity', allowed: false, reason: 'no_pod_on_node' });
  });

  it('a bad question exits 2 with one line naming what is wrong', () => {
    const r = runCli(['explain', 'workload', 'ratings', '--configDir', DEMO]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('istiod-ts explain: workload "ratings" is not NAMESPACE/POD\n');
  });

  it('--help prints the usage and exits 0', () => {
    const r = runCli(['explain', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: istiod-ts explain identity --node NODE --identity');
  });
});
