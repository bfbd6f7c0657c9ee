// Jest global setup: the status page's compiled script, which src/server/debug-ui.ts serves, for
// tests that run the server from its TypeScript sources. jest.config.js maps the module's
// require.resolve('./ui/status-page.js') to the build's output, dist/src/server/ui/status-page.js;
// this compiles it with the build's own command when it is missing or older than a source, so a
// test never serves a stale page.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const UI = path.join(ROOT, 'src', 'server', 'ui');
export const STATUS_PAGE_JS = path.join(ROOT, 'dist', 'src', 'server', 'ui', 'status-page.js');

function mtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

export default function buildStatusPage(): void {
  const built = mtime(STATUS_PAGE_JS);
  const newest = Math.max(...fs.readdirSync(UI).map((f) => mtime(path.join(UI, f))));
  if (built >= newest) return;
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(UI, 'tsconfig.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
