// Duplicate checks over lists of any length: a Set, and each repeated value reported once
// however often it repeats (10,000 copies of one name are one mistake, not 9,999).

export class RepeatFinder<T> {
  private readonly seen = new Set<T>();
  private readonly reported = new Set<T>();

  /** True the first time `value` comes again; false when it is new or was already reported. */
  isNewRepeat(value: T): boolean {
    if (!this.seen.has(value)) {
      this.seen.add(value);
      return false;
    }
    if (this.reported.has(value)) return false;
    this.reported.add(value);
    return true;
  }
}
