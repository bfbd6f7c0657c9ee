// A slow or hung API server: matching requests are answered only after a delay. The request has
// been carried out already (a write is stored and its watch event sent), so a client that gives up
// first sees a write that landed but never answered. The server notes which delayed requests the
// client gave up on (closed the connection before the answer).

export interface Delay {
  verb?: string;
  resource?: string;
  /** Only requests for this subresource (`status`); '' for the main resource only. */
  subresource?: string;
  name?: string;
  /** How long the answer is held back; a hang is a delay longer than the test. */
  ms: number;
  /** How many matching requests are delayed; default every one until cleared. */
  times?: number;
}

/** What a delay is matched on. */
export interface DelayedRequest {
  verb: string;
  resource: string;
  subresource?: string;
  name?: string;
}

export class Delays {
  private readonly delays: Delay[] = [];
  /** Delayed requests whose client went away before the answer, as "verb resource". */
  readonly abandoned: string[] = [];
  private readonly held = new Set<() => void>();

  add(delay: Delay): void {
    this.delays.push({ ...delay, times: delay.times ?? Infinity });
  }

  /** Forgets every delay and answers the held requests now. */
  clear(): void {
    this.delays.length = 0;
    for (const release of this.held) release();
  }

  /** Waits as long as the first matching delay says (or until cleared), noting a client that left first. */
  async hold(request: DelayedRequest, onClose: (listener: () => void) => void): Promise<void> {
    const { verb, resource } = request;
    const i = this.delays.findIndex(
      (d) =>
        (d.verb === undefined || d.verb === verb) &&
        (d.resource === undefined || d.resource === resource) &&
        (d.subresource === undefined || d.subresource === (request.subresource ?? '')) &&
        (d.name === undefined || d.name === request.name),
    );
    const delay = this.delays[i];
    if (!delay) return;
    delay.times = (delay.times ?? Infinity) - 1;
    if (delay.times <= 0) this.delays.splice(i, 1);
    let done = false;
    onClose(() => {
      if (!done) this.abandoned.push(`${verb} ${resource}`);
    });
    await new Promise<void>((resolve) => {
      const release = () => {
        clearTimeout(timer);
        this.held.delete(release);
        resolve();
      };
      const timer = setTimeout(release, delay.ms);
      this.held.add(release);
    });
    done = true;
  }
}
