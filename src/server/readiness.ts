// /ready's state: every component registers a condition and flips it; the server is ready when
// all are. Registration order is kept so the 503 body reads in startup order.

import type { Readiness } from '../contract/host';

export class ReadinessTracker implements Readiness {
  private readonly state = new Map<string, boolean>();
  private readonly details = new Map<string, () => readonly string[]>();

  /** `detail` names what the component still waits for, shown after its name while it is not ready. */
  register(component: string, detail?: () => readonly string[]): (ready: boolean) => void {
    if (this.state.has(component)) throw new Error(`readiness condition "${component}" is already registered`);
    this.state.set(component, false);
    if (detail) this.details.set(component, detail);
    return (ready: boolean) => {
      this.state.set(component, ready);
    };
  }

  /** Components not ready yet, in registration order. */
  notReady(): string[] {
    return [...this.state].filter(([, ready]) => !ready).map(([name]) => name);
  }

  /** notReady() with what each component still waits for, e.g. "store (kubernetes Pod)". */
  describeNotReady(): string[] {
    return this.notReady().map((name) => {
      const waiting = this.details.get(name)?.() ?? [];
      return waiting.length > 0 ? `${name} (${waiting.join(', ')})` : name;
    });
  }

  isReady(): boolean {
    return this.notReady().length === 0;
  }
}
