// The derived resources of one type: encoded bytes and version per name, plus the change
// bookkeeping of the batch being applied (first-touch bytes, so a change set is exactly the
// difference between the state before and after the batch).

import type { XdsResource } from '../contract/xds-resources';
import { versionOf } from './codec';

/** Separates several keys kept in one string (a string costs far less heap than an array of them). */
export const KEY_SEPARATOR = ' ';

export interface Entry extends XdsResource {
  /** Lookup keys other than the name (`<network>/<ip>`), joined by KEY_SEPARATOR. */
  aliases?: string;
  /** Service names a workload lists, joined by KEY_SEPARATOR; '' marks a service entry. */
  services?: string;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

export class DerivedStore {
  readonly entries = new Map<string, Entry>();
  /** name -> bytes at the start of the batch (undefined = absent). */
  private readonly before = new Map<string, Uint8Array | undefined>();
  /** Hook for the reverse maps kept by the index. */
  constructor(
    private readonly onChange: (previous: Entry | undefined, next: Entry | undefined) => void = () => undefined,
  ) {}

  /** Names set during a sweep (a full rebuild); the others are removed when it ends. */
  private swept: Set<string> | undefined;
  /** False while the first build fills the table: nobody has seen a state to diff against. */
  private tracking = true;

  /**
   * Runs `fill` without the change bookkeeping: the index's first build has no earlier state, and
   * remembering then diffing 100k names it would only discard was a tenth of that build.
   */
  untracked(fill: () => void): void {
    this.tracking = false;
    try {
      fill();
    } finally {
      this.tracking = true;
    }
  }

  beginSweep(): void {
    this.swept = new Set();
  }

  endSweep(): void {
    const kept = this.swept;
    this.swept = undefined;
    if (!kept) return;
    for (const name of [...this.entries.keys()]) if (!kept.has(name)) this.set(name, undefined);
  }

  /** Sets or clears `name`; unchanged bytes are a no-op (and keep the existing entry). */
  set(name: string, bytes: Uint8Array | undefined, extra?: Omit<Entry, 'name' | 'version' | 'bytes'>): void {
    if (bytes !== undefined) this.swept?.add(name);
    const previous = this.entries.get(name);
    if (bytes === undefined) {
      if (!previous) return;
      this.remember(name, previous);
      this.entries.delete(name);
      this.onChange(previous, undefined);
      return;
    }
    if (previous && sameBytes(previous.bytes, bytes)) return;
    this.remember(name, previous);
    // One literal of a fixed shape: spreading `extra` into a literal copied its keys one by one
    // (a tenth of DerivedStore.set's time in a 100k-pod build) and gave entries several shapes.
    const next: Entry = {
      name,
      version: versionOf(bytes),
      bytes,
      aliases: extra?.aliases,
      services: extra?.services,
    };
    this.entries.set(name, next);
    this.onChange(previous, next);
  }

  private remember(name: string, previous: Entry | undefined): void {
    if (this.tracking && !this.before.has(name)) this.before.set(name, previous?.bytes);
  }

  /** The names whose bytes differ from the batch start, and resets the bookkeeping. */
  takeChanges(): { updated: string[]; removed: string[] } {
    const updated: string[] = [];
    const removed: string[] = [];
    for (const [name, before] of this.before) {
      const now = this.entries.get(name);
      if (!now) {
        if (before) removed.push(name);
      } else if (!before || !sameBytes(before, now.bytes)) updated.push(name);
    }
    this.before.clear();
    return { updated: updated.sort(), removed: removed.sort() };
  }
}
