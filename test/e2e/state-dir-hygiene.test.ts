// --stateDir holds private keys: a folder or key file others may read is tightened at start, with a
// warning naming it; and a rotation distribution delay shorter than the workload certificate TTL is
// warned about, as its help text asks.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO, LOOPBACK_LISTENER_ARGS, runCli, ServerProcess, waitForStatus } from '../support/cli';

const TIGHTENED = 'state folder permissions were too open; tightened (the key may have been read by others)';
const DELAY_WARNING =
  'CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY is shorter than DEFAULT_WORKLOAD_CERT_TTL; a rotated root may sign before every workload has renewed and received it';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-state-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function serve(state: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = ServerProcess.start(
    ['--configDir', DEMO, '--stateDir', state, '--meshConfig', path.join(dir, 'none'), ...LOOPBACK_LISTENER_ARGS],
    env,
  );
  await waitForStatus(`http://127.0.0.1:${await server.port('http')}/ready`, 200, 30_000);
  return server;
}

test('a state folder at 0755 and a token key at 0644 are tightened to 0700 and 0600, each named in a warning', async () => {
  const state = path.join(dir, 'state');
  fs.mkdirSync(state, { mode: 0o755 });
  fs.chmodSync(state, 0o755);
  const key = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  fs.writeFileSync(path.join(state, 'token-key.pem'), key.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o644 });
  fs.chmodSync(path.join(state, 'token-key.pem'), 0o644);
  const server = await serve(state);
  try {
    expect(fs.statSync(state).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(state, 'token-key.pem')).mode & 0o777).toBe(0o600);
    // The CA key it created is private from the start.
    expect(fs.statSync(path.join(state, 'ca-key.pem')).mode & 0o777).toBe(0o600);
    const warned = server.logs.filter((l) => l.msg === TIGHTENED).map((l) => [l['path'], l['from'], l['to']]);
    expect(warned).toEqual([
      [state, '0755', '0700'],
      [path.join(state, 'token-key.pem'), '0644', '0600'],
    ]);
  } finally {
    await server.stop();
  }
}, 60_000);

test('a distribution delay shorter than DEFAULT_WORKLOAD_CERT_TTL is warned about; the defaults are not', async () => {
  const short = await serve(path.join(dir, 'a'), { CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY: '1h' });
  try {
    expect(short.logs.filter((l) => l.msg === DELAY_WARNING)).toHaveLength(1);
  } finally {
    await short.stop();
  }
  const defaults = await serve(path.join(dir, 'b'));
  try {
    expect(defaults.logs.filter((l) => l.msg === DELAY_WARNING)).toHaveLength(0);
    expect(defaults.logs.filter((l) => l.msg === TIGHTENED)).toHaveLength(0);
  } finally {
    await defaults.stop();
  }
}, 60_000);

describe('one server per state folder', () => {
  test('a second server on the same folder exits 2 naming the holder; after the first stops it starts', async () => {
    const state = path.join(dir, 'state');
    const first = await serve(state);
    let firstStopped = false;
    try {
      const second = runCli(
        ['--configDir', DEMO, '--stateDir', state, '--meshConfig', path.join(dir, 'none'), ...LOOPBACK_LISTENER_ARGS],
        {},
      );
      expect(second.status).toBe(2);
      const lines = second.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{'));
      expect(lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^istiod-ts: --stateDir ${state} is in use by another istiod-ts \\(pid ${first.child.pid} on .*, since .*\\); stop it or give this one another folder$`,
          ),
        ),
      ]);
      await first.stop();
      firstStopped = true;
      expect(fs.existsSync(path.join(state, '.lock'))).toBe(false);
      const third = await serve(state);
      await third.stop();
    } finally {
      if (!firstStopped) await first.stop();
    }
  }, 60_000);

  test('a lock left by a process that is gone (kill -9) is taken over', async () => {
    const state = path.join(dir, 'state');
    fs.mkdirSync(state, { mode: 0o700 });
    // A pid far above any pid_max in use, on this host: its holder is certainly gone.
    fs.writeFileSync(
      path.join(state, '.lock'),
      JSON.stringify({ pid: 2 ** 22 + 17, host: os.hostname(), since: '2026-01-01T00:00:00.000Z' }),
    );
    const server = await serve(state);
    try {
      expect(JSON.parse(fs.readFileSync(path.join(state, '.lock'), 'utf8'))).toMatchObject({ pid: server.child.pid });
    } finally {
      await server.stop();
    }
  }, 60_000);
});
