// `istiod-ts create-remote-secret` against upstream `istioctl create-remote-secret`, byte for byte:
// both run on the same remote cluster (the test API server, with a token controller) with the same
// flags, and must print the same Secret and exit alike. A judge by a real peer, so it is not part of
// `npm test` (which has no istioctl): `npm run test:peers` runs it with ISTIOCTL_BIN set to a built
// istioctl, as `npm run interop` takes it, and fails at once without one.
// create-remote-secret.test.ts checks the shape istioctl's own tests expect in every run.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { READER_SERVICE_ACCOUNT } from '../../src/cli/remote-secret-account';
import { TestApiServer } from '../support/apiserver';
import { namespace } from '../support/apiserver/fixtures';
import { startTokenController } from '../support/apiserver/token-controller';
import { runBinary, runCliAsync, type RunResult } from '../support/cli';

const ISTIOCTL = process.env['ISTIOCTL_BIN'] ?? '';
if (!ISTIOCTL) throw new Error('ISTIOCTL_BIN must name a built istioctl (docs/interop.md)');
const NS = 'istio-system';
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBinterop\n-----END CERTIFICATE-----\n';

describe('create-remote-secret output equals istioctl create-remote-secret', () => {
  let api: TestApiServer;
  let tokens: ReturnType<typeof startTokenController>;
  let kubeconfig: string;
  let home: string;

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of [NS, 'kube-system', 'external']) api.put(namespace(ns));
    api.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: READER_SERVICE_ACCOUNT, namespace: NS } });
    api.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'istiod', namespace: 'external' } });
    tokens = startTokenController(api, { caPem: CA_PEM, delayMs: 200 });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-istioctl-crs-'));
    // No namespace in the context: istioctl would take it for the control plane's namespace.
    kubeconfig = api.writeKubeconfig(home, '');
  });

  afterAll(async () => {
    tokens.stop();
    await api.close();
  });

  /** istioctl with nothing from this machine's environment: no $KUBECONFIG, an empty $HOME. */
  const istioctl = (args: string[]): Promise<RunResult> =>
    runBinary(
      ISTIOCTL,
      ['create-remote-secret', '--kubeconfig', kubeconfig, ...args],
      { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home },
      60_000,
    );
  const ours = (args: string[]): Promise<RunResult> =>
    runCliAsync(['create-remote-secret', '--kubeconfig', kubeconfig, ...args], { KUBECONFIG: '', HOME: home });

  it.each([
    ['the defaults, istioctl first (its token Secret found and reused)', ['--name', 'c0'], true],
    ['the cluster named by the uid of kube-system', ['--server', 'https://10.1.2.3:6443'], false],
    // Names YAML would read as a number or a boolean are quoted, as keys and as values.
    ['a cluster named like a number', ['--name', '1234', '--server', 'https://10.1.2.3'], false],
    ['a cluster named like a YAML 1.1 boolean', ['--name', 'on', '--server', 'https://10.1.2.3'], false],
    ['a cluster named like a float', ['--name', '1e3', '--server', 'https://10.1.2.3'], false],
    [
      '--type config in another namespace, with a server and a TLS server name',
      [
        '--type',
        'config',
        '-n',
        'external',
        '--name',
        'cfg',
        '--server',
        'https://a.example',
        '--tls-server-name',
        'k8s',
      ],
      false,
    ],
    // Not --auth-plugin-config: istioctl drops its value (the flag's map is never read) and always
    // writes `config: {}`; istiod-ts writes what was given (docs/install.md).
    [
      'an auth-provider plugin instead of a token',
      ['--name', 'p1', '--auth-type', 'plugin', '--auth-plugin-name', 'gcp'],
      false,
    ],
  ])('%s', async (_what, args, istioctlFirst) => {
    const [theirs, mine] = istioctlFirst
      ? [await istioctl(args), await ours(args)]
      : [await ours(args), await istioctl(args)].reverse();
    expect({ status: theirs!.status, stderr: theirs!.stderr }).toMatchObject({ status: 0 });
    expect(mine!.status).toBe(0);
    expect(mine!.stdout).toBe(theirs!.stdout);
  });

  it('both refuse a missing account they may not create, with exit 1', async () => {
    const args = ['--name', 'c9', '-n', 'kube-system', '--create-service-account=false'];
    const [theirs, mine] = [await istioctl(args), await ours(args)];
    expect([theirs.status, mine.status]).toEqual([1, 1]);
    expect(mine.stdout).toBe('');
  });
});
