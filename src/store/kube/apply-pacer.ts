// Paces how much of the informers' buffered changes the store takes per event-loop turn. A cold
// start lists every pod at once, and applying a change costs the store's indexes and everything
// subscribed to it (the ambient index above all) a fraction of a millisecond; applied in one turn,
// 100k pods are a multi-second stall in which /ready, the CA and the webhook answer nobody. The
// pacer gives all kinds together at most STORE_APPLY_TURN_MS per turn, round-robin, and sizes each
// step from the measured cost per change of that source, so a turn stays short on a slow machine
// and a fast one still moves thousands of changes per turn. The cost is kept per source because
// kinds differ: a Service change recomputes its hostname and the pods it selects, several times a
// pod's cost, so a step of Services sized by the pods' estimate overruns the turn several times
// over.

/** Time the store may spend applying changes per event-loop turn, all kinds together. */
export const STORE_APPLY_TURN_MS = 20;
/**
 * Most time one step is sized for; a turn is several such steps. The pacer reads the clock only
 * between steps, and a step can cost several times its estimate (a GC or incremental marking inside
 * it, the host slowing down); sized to the whole turn, such a step was a cold start's longest
 * event-loop block. Capped at this, the same miss costs a few times this, not a few times the turn.
 */
export const STORE_APPLY_STEP_MS = 5;
/**
 * Least a turn may take when the rest of the event loop's iteration already used the budget, so the
 * backlog still moves every iteration.
 */
export const STORE_APPLY_MIN_TURN_MS = STORE_APPLY_STEP_MS;
/** Fewest changes per step, so a store slower than the budget still advances every turn. */
export const STORE_APPLY_MIN_CHUNK = 16;
/** Most changes per step, whatever the measured cost says. */
export const STORE_APPLY_MAX_CHUNK = 2000;
/**
 * Changes in a source's first step, before its cost is known. Small on purpose: at the start the
 * code is not yet optimized and a change costs several times its later cost, so a first step sized
 * from a guess overruns the turn.
 */
export const STORE_APPLY_FIRST_STEP = 16;

/** Something holding changes the store has not taken yet (a kind watcher). */
export interface PacedSource {
  /** Applies at most `max` buffered changes; returns how many it applied. */
  drain(max: number): number;
  /** Whether changes are still buffered. */
  hasPending(): boolean;
}

export interface PacerClock {
  now(): number;
  /** Runs `fn` on a later turn of the event loop. */
  defer(fn: () => void): void;
}

/**
 * The next turn is a timer, not an immediate. Answers that are written in the check phase (the
 * webhook's write batch is uncorked by an immediate queued while its request is read, in the poll
 * phase) ran after the pacer's turn when the turn was an immediate too: the pacer queues its next
 * turn at the end of the one before, ahead of anything the poll phase queues, so every such answer
 * during a cold start waited one more whole turn. As a timer the turn runs in the timers phase, and
 * an iteration is turn, I/O, then the check phase's answers. A timer set at the end of a long turn
 * is already due (its start is the loop's time from before the turn), so the loop does not sleep
 * between turns.
 */
export const realClock: PacerClock = { now: () => performance.now(), defer: (fn) => setTimeout(fn, 0) };

export class ApplyPacer {
  /** Sources with buffered changes, in serving order. */
  private readonly waiting = new Set<PacedSource>();
  private scheduled = false;
  /** Smoothed cost of one change per source, ms. */
  private readonly costs = new WeakMap<PacedSource, number>();
  /** The estimate last updated, for tests and /debug (NaN until one is measured). */
  private lastCostMs = NaN;
  /** When the last turn that left changes waiting ended (the next turn follows it at once). */
  private continuedAt: number | undefined;

  constructor(private readonly clock: PacerClock = realClock) {}

  /** Asks for a turn for `source`; its changes are taken over one or more later turns. */
  request(source: PacedSource): void {
    this.waiting.add(source);
    if (this.scheduled) return;
    this.scheduled = true;
    this.clock.defer(() => this.turn());
  }

  /** Cost per change the pacer last measured (for tests and /debug). */
  get costPerChangeMs(): number {
    return this.lastCostMs;
  }

  private turn(): void {
    this.scheduled = false;
    const start = this.clock.now();
    // The budget is per event-loop iteration, not the pacer's alone: what ran since the last turn
    // (the list pages parsed, answers, a GC) is charged to this one. Charged only to the pacer, an
    // iteration was its turn plus all of that, and in a cold start two such iterations in a row
    // (a major GC in one) held a webhook answer for several times the budget.
    const budget =
      this.continuedAt === undefined
        ? STORE_APPLY_TURN_MS
        : Math.max(STORE_APPLY_MIN_TURN_MS, STORE_APPLY_TURN_MS - Math.max(0, start - this.continuedAt));
    this.continuedAt = undefined;
    let spent = 0;
    // Round-robin: each waiting source takes one step per pass, sized to its share of what is
    // left, until the budget is spent. Sized to all that is left, the first source took the whole
    // turn whenever it had enough changes, and the others waited for it to finish.
    while (this.waiting.size > 0 && spent < budget) {
      const pass = [...this.waiting];
      for (let i = 0; i < pass.length; i++) {
        const source = pass[i];
        const left = budget - spent;
        if (!source || left <= 0) break;
        const share = Math.min(STORE_APPLY_STEP_MS, left / (pass.length - i));
        const cost = this.costs.get(source);
        const max =
          cost === undefined
            ? STORE_APPLY_FIRST_STEP
            : Math.min(STORE_APPLY_MAX_CHUNK, Math.max(STORE_APPLY_MIN_CHUNK, Math.floor(share / cost)));
        const before = this.clock.now();
        const applied = source.drain(max);
        const took = this.clock.now() - before;
        // Quick to learn that changes cost more (the next step must fit the budget), slow to
        // believe they got cheaper (one fast step does not make the next one too long).
        if (applied > 0) {
          const measured = took / applied;
          this.lastCostMs = Math.max(
            1e-4,
            cost === undefined || measured > cost ? measured : 0.7 * cost + 0.3 * measured,
          );
          this.costs.set(source, this.lastCostMs);
        }
        // A source that took nothing asks again when it has something (request).
        if (applied === 0 || !source.hasPending()) this.waiting.delete(source);
        spent = this.clock.now() - start;
      }
    }
    // The next turn starts with the next source, so a turn cut short does not favour the first.
    const [first] = this.waiting;
    if (first && this.waiting.size > 1) {
      this.waiting.delete(first);
      this.waiting.add(first);
    }
    if (this.waiting.size > 0) {
      this.scheduled = true;
      this.continuedAt = this.clock.now();
      this.clock.defer(() => this.turn());
    }
  }
}

/** The process's pacer: every kind watcher shares one budget per turn. */
export const sharedApplyPacer = new ApplyPacer();
