// What an API server error means to a writer: retry the call (overload, outage), retry the round
// from a fresh read (409 Conflict), or treat as an answer (404, AlreadyExists).

import { KubeApiError } from './client';

/** 429, 5xx, and anything that is not an HTTP answer (refused, reset, timed out). */
export function isTransient(err: unknown): boolean {
  if (err instanceof KubeApiError) return err.status === 429 || err.status >= 500;
  return true; // connection refused or reset, timeouts
}

/** 409: another writer changed the object since it was read, or created it first. */
export function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409 && err.reason === 'AlreadyExists';
}

/** For writers that compete (a lease): a 409 is a round lost to another writer, not an error. */
export async function unlessConflict<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (err) {
    if (isConflict(err)) return undefined;
    throw err;
  }
}
