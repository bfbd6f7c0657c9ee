// The deadline of a graceful close. A listener may be asked to close more than once (its own
// shutdown hook, then the process's drain); the earliest deadline asked for wins, and reaching it
// runs the forced close.

export class CloseDeadline {
  private at = Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly force: () => void) {}

  /** Forces the close `deadlineMs` from now, unless an earlier deadline is already set. */
  shorten(deadlineMs: number): void {
    const at = performance.now() + deadlineMs;
    if (at >= this.at) return;
    this.at = at;
    clearTimeout(this.timer);
    this.timer = setTimeout(this.force, deadlineMs);
  }

  /** The close finished on its own: nothing left to force. */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
