import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTokenCommand } from '../../../src/cli/token';
import { TOKEN_KEY_FILE, verifyLocalToken } from '../../../src/security/local-jwt';
import { tempDir } from '../../support/ca/fixtures';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runTokenCommand(
    argv,
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

describe('istiod-ts token', () => {
  test('prints a token the server verifies with the key in --stateDir', async () => {
    const dir = tempDir();
    const r = await run([
      '--stateDir',
      dir,
      '--namespace',
      'istio-system',
      '--serviceAccount',
      'ztunnel',
      '--pod',
      'ztunnel-a',
      '--podUID',
      'u1',
      '--node',
      'n1',
      '--ttl',
      '2h',
    ]);
    expect(r.code).toBe(0);
    const key = crypto.createPublicKey(
      crypto.createPrivateKey(fs.readFileSync(path.join(dir, TOKEN_KEY_FILE), 'utf8')),
    );
    const token = verifyLocalToken(key, r.out.trim(), ['istio-ca']);
    expect(token).toMatchObject({
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: 'ztunnel-a',
      podUid: 'u1',
      nodeName: 'n1',
    });
    expect(token.exp - Math.floor(Date.now() / 1000)).toBeGreaterThan(7000);
  });

  test('missing required flags are a usage error naming them, exit 2', async () => {
    const r = await run(['--stateDir', tempDir(), '--namespace', 'x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('missing --serviceAccount, --pod, --podUID');
  });

  test('--help prints the usage and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: istiod-ts token');
  });
});
