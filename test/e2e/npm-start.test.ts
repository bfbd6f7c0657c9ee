// `npm start` as the README's quick start runs it: the banner goes to stdout and every log line to
// stderr as JSON, so `npm start 2>log.json` leaves a parseable log; and a SIGTERM sent to npm (as a
// process manager or a CI runner sends it) reaches the server, which drains and exits instead of
// being orphaned behind a dead npm.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { localServeArgs } from '../support/cli';

const ROOT = path.resolve(__dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npm start', () => {
  let state: string;
  beforeEach(() => {
    state = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-npm-start-'));
  });
  afterEach(() => fs.rmSync(state, { recursive: true, force: true }));

  it('keeps the banner on stdout and JSON logs on stderr, and a SIGTERM to npm stops the server', async () => {
    // --ignore-scripts skips prestart's build (npm test built dist/ already) but still runs start.
    // localServeArgs repeats --configDir; the last one wins, and it is the same folder.
    const child = spawn(NPM, ['start', '--ignore-scripts', '--silent', '--', ...localServeArgs(state)], {
      cwd: ROOT,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let serverPid: number | undefined;
    try {
      await until('the banner', () => stdout.includes('secure gRPC'), 30_000);
      const firstLog = JSON.parse(stderr.split('\n')[0] ?? '') as { pid: number };
      serverPid = firstLog.pid;
      const pid = serverPid;
      expect(alive(pid)).toBe(true);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await until('the server process to exit', () => !alive(pid), 15_000);

      const outLines = stdout.split('\n').filter((l) => l.trim() !== '');
      expect(outLines[0]).toMatch(/^istiod-ts \S+ started in local mode/);
      for (const line of outLines) expect(line.startsWith('{')).toBe(false);
      const errLines = stderr.split('\n').filter((l) => l.trim() !== '');
      for (const line of errLines) expect(() => JSON.parse(line) as unknown).not.toThrow();
      expect(errLines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      // An orphaned server would hold the pipes open and keep jest waiting: a failure must not hang.
      if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
    }
  }, 60_000);
});
