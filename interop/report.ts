// What one interop run found: each check with its verdict and the detail that proves it, and the
// figures (CPU, memory, bytes) a run reports. Printed as it goes and written as JSON at the end, so
// docs/interop.md can quote a whole run.

import { writeFileSync } from 'node:fs';

export interface CheckResult {
  part: string;
  scenario: string;
  check: string;
  ok: boolean;
  detail: string;
}

export class Report {
  readonly results: CheckResult[] = [];
  readonly figures: Record<string, unknown> = {};
  readonly peers: Record<string, string> = {};

  check(part: string, scenario: string, check: string, ok: boolean, detail = ''): boolean {
    this.results.push({ part, scenario, check, ok, detail });
    console.log(`${ok ? 'PASS' : 'FAIL'}  [${part}/${scenario}] ${check}${detail ? ` — ${detail}` : ''}`);
    return ok;
  }

  /** A check whose body throws: the error is the failure's detail, and the run goes on. */
  async attempt(part: string, scenario: string, check: string, body: () => Promise<string>): Promise<boolean> {
    try {
      return this.check(part, scenario, check, true, await body());
    } catch (err) {
      return this.check(part, scenario, check, false, describeError(err));
    }
  }

  figure(name: string, value: unknown): void {
    this.figures[name] = value;
    console.log(`FIGURE ${name}: ${JSON.stringify(value)}`);
  }

  get failed(): number {
    return this.results.filter((r) => !r.ok).length;
  }

  summary(): string {
    return `interop: ${this.results.length - this.failed} passed, ${this.failed} failed`;
  }

  write(file: string): void {
    writeFileSync(
      file,
      `${JSON.stringify({ at: new Date().toISOString(), peers: this.peers, results: this.results, figures: this.figures }, null, 2)}\n`,
    );
  }
}

/** The message, its cause (fetch hides the socket error there) and where it was thrown. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  const at =
    err.stack
      ?.split('\n')
      .find((l) => l.includes('/interop/'))
      ?.trim() ?? '';
  return `${err.message}${cause}${at ? ` ${at}` : ''}`;
}
