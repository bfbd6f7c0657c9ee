// A --meshConfig file that istiod would refuse stops the start: exit 2, one line on stderr naming
// the file and the field, no stack trace, and nothing created in --stateDir.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO, runCli } from '../support/cli';

const QUIET = ['--grpcAddr', '', '--secureGRPCAddr', '', '--httpsAddr', '', '--monitoringAddr', '', '--httpAddr', ''];

describe('--meshConfig at start', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-mesh-start-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a bad enum name exits 2 with one line naming the field, no stack, and no CA root in --stateDir', () => {
    const mesh = path.join(root, 'mesh');
    fs.writeFileSync(mesh, 'trustDomain: cluster.local\noutboundTrafficPolicy:\n  mode: ALLOW_SOME\n');
    const state = path.join(root, 'state');
    const r = runCli(['--configDir', DEMO, '--stateDir', state, '--meshConfig', mesh, ...QUIET]);
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      `istiod-ts: invalid value for --meshConfig: ${mesh}: outboundTrafficPolicy.mode: unknown value "ALLOW_SOME" for enum istio.mesh.v1alpha1.MeshConfig.OutboundTrafficPolicy.Mode (one of REGISTRY_ONLY, ALLOW_ANY, ALLOW_ANY_DYNAMIC_DNS)`,
    ]);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
    expect(fs.existsSync(state)).toBe(false);
  });
});
