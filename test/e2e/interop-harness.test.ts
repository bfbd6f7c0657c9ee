// `npm run interop` without the peers it drives: it names each missing binary and exits 1, having
// run nothing; it never builds a peer.

import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli';

const RUN = path.join(REPO_ROOT, 'dist', 'interop', 'run.js');

function interop(args: string[], env: Record<string, string>) {
  const base = { ...process.env };
  delete base['ZTUNNEL_BIN'];
  delete base['ISTIOCTL_BIN'];
  return spawnSync(process.execPath, [RUN, ...args], { encoding: 'utf8', env: { ...base, ...env }, timeout: 20_000 });
}

test('names every missing binary and exits 1 without running anything', () => {
  const r = interop(['all'], {});
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('ZTUNNEL_BIN is not set');
  expect(r.stderr).toContain('ISTIOCTL_BIN is not set');
  expect(r.stderr).toContain('nothing was run');
  expect(r.stdout).not.toMatch(/PASS|FAIL/);
});

test('a binary that is not executable is named as such', () => {
  const r = interop(['ztunnel'], { ZTUNNEL_BIN: path.join(REPO_ROOT, 'package.json') });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain(`ZTUNNEL_BIN=${path.join(REPO_ROOT, 'package.json')} is not an executable file`);
});

test('an unknown subcommand is a usage error, exit 2', () => {
  const r = interop(['nonsense'], {});
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('unknown subcommand nonsense');
});
