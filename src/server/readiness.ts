// /ready's state: every component registers a condition and flips it; the server is ready when
// all are. Registration order is kept so the 503 body reads in startup order.

import type { Readiness } from './context';

export class ReadinessTracker implements Readiness {
  private readonly state = new Map<string, boolean>();

  register(component: string): (ready: boolean) => void {
    if (this.state.has(component)) throw new Error(`readiness condition "${component}" is already registered`);
    this.state.set(component, false);
    return (ready: boolean) => {
      this.state.set(component, ready);
    };
  }

  /** Components not ready yet, in registration order. */
  notReady(): string[] {
    return [...this.state].filter(([, ready]) => !ready).map(([name]) => name);
  }

  isReady(): boolean {
    return this.notReady().length === 0;
  }
}
