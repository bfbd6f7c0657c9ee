// The test API server and what tests use with it.

export { TestApiServer, MAX_BODY_BYTES } from './server';
export type { Fault, RecordedRequest, TestApiServerOptions } from './server';
export { serviceAccountIdentity, POD_NAME_EXTRA, POD_UID_EXTRA, API_SERVER_AUDIENCE } from './tokens';
export type { TokenIdentity } from './tokens';
export { HISTORY_LIMIT } from './storage';
export { neededRules } from './rbac';
export type { NeededRule } from './rbac';
export type { StoredObject } from './storage';

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
