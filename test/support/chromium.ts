// A real headless Chromium for browser tests: Debian's `chromium` package (or CHROMIUM_PATH), driven
// by playwright-core, which ships no browser of its own. `npm test` runs tools/ensure-chromium.sh
// first, which installs the package on a Debian machine as root.

import { accessSync, constants } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** The Chromium binary to drive, or an error naming the fix in one line. */
export function chromiumPath(): string {
  const path = process.env['CHROMIUM_PATH'] || DEBIAN_CHROMIUM;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `no Chromium at ${path}: run 'apt-get install chromium' (tools/ensure-chromium.sh does it as root) or set CHROMIUM_PATH=/path/to/chromium`,
    );
  }
  return path;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Tests run as root on CI, where Chromium's sandbox cannot start; the page is our own.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** Everything a page logs as an error, and every request that failed or got an error status. */
export interface PageProblems {
  consoleErrors: string[];
  failedRequests: string[];
}

export function watchProblems(page: Page): PageProblems {
  const problems: PageProblems = { consoleErrors: [], failedRequests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.consoleErrors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.consoleErrors.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => problems.failedRequests.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.failedRequests.push(`${r.url()}: ${r.status()}`);
  });
  return problems;
}
