// The edge of the self-signed root rotation: reads the stored state on every check interval, asks
// root-rotation.ts what the clock allows, generates a root when one is due, writes the step
// through the store's read-modify-write, and hands the result to the authority. Every replica
// runs it; the store's precondition makes replicas stepping at once agree on one new root, and a
// replica that lost just adopts what the winner wrote.

import { Gauge, Registry } from 'prom-client';
import { scopedLogger } from '../../log/logger';
import type { CaSecretData, CaSecretStore } from './ca-secret-store';
import {
  beginRotation,
  nextAction,
  RootPair,
  RootState,
  RotationPhase,
  RotationPolicy,
  sameState,
  settle,
  steadyState,
  trustedRoots,
} from './root-rotation';

const log = scopedLogger('ca');

/** The numeric value of each phase in the citadel_root_rotation_phase gauge. */
export const ROTATION_PHASE_VALUE: Record<RotationPhase, number> = { steady: 0, distributing: 1, overlap: 2 };

/** The stored data as a state; a root never rotated is steady since an unknown time (0), so it reads the same every check. */
export function toRootState(data: CaSecretData): RootState {
  const signing = { certPem: data.caCertPem, keyPem: data.caKeyPem };
  return data.rotation ? { signing, rotation: data.rotation } : steadyState(signing, 0);
}

function toData(state: RootState): CaSecretData {
  return { caCertPem: state.signing.certPem, caKeyPem: state.signing.keyPem, rotation: state.rotation };
}

export interface RootRotatorOptions {
  policy: RotationPolicy;
  /** Makes the next root (self-signed.ts generateRoot). */
  generate: () => Promise<RootPair>;
  now?: () => number;
  metrics?: Registry;
}

const PHASE_MESSAGES: Record<RotationPhase, string> = {
  distributing: 'root rotation: new root distributed; the old root still signs',
  overlap: 'root rotation: signing switched to the new root; the old root stays trusted',
  steady: 'root rotation: old root dropped from the trust bundle; rotation finished',
};

export class RootRotator {
  private readonly now: () => number;
  private last: RootState | undefined;
  private listener: ((state: RootState) => void) | undefined;
  private running: Promise<RootState> | undefined;
  private readonly phaseGauge: Gauge | undefined;

  constructor(
    private readonly store: CaSecretStore,
    private readonly opts: RootRotatorOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.phaseGauge = opts.metrics
      ? new Gauge({
          name: 'citadel_root_rotation_phase',
          help: 'self-signed root rotation phase: 0 steady, 1 distributing (new root trusted, old signs), 2 overlap (new signs, old trusted)',
          registers: [opts.metrics],
        })
      : undefined;
  }

  /** The state the last check settled on. */
  current(): RootState | undefined {
    return this.last;
  }

  /** Hears every state a check settles on that differs from the one before. */
  onState(listener: (state: RootState) => void): void {
    this.listener = listener;
  }

  /** One check; concurrent callers share the check under way. */
  check(): Promise<RootState> {
    this.running ??= this.checkOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async checkOnce(): Promise<RootState> {
    const { policy } = this.opts;
    const now = this.now();
    const stored = await this.store.get();
    if (!stored) throw new Error(`${this.store.describe()}: the root is gone`);
    let state = toRootState(stored);
    const action = nextAction(state, now, policy);
    if (action !== 'none') {
      // Generated before the write: the store's mutate is synchronous. A replica that loses the
      // race drops its root unused.
      const fresh = action === 'begin' ? await this.opts.generate() : undefined;
      const step = { wrote: false };
      const written = await this.store.update((current) => {
        const before = toRootState(current);
        let after = before;
        if (fresh && nextAction(after, now, policy) === 'begin') after = beginRotation(after, fresh, now);
        after = settle(after, now, policy);
        if (sameState(before, after)) return undefined;
        step.wrote = true;
        return toData(after);
      });
      state = toRootState(written);
      if (step.wrote)
        log.debug({ where: this.store.describe(), phase: state.rotation.phase }, 'root rotation step stored');
    }
    this.observe(state);
    return state;
  }

  private observe(state: RootState): void {
    const previous = this.last;
    this.last = state;
    this.phaseGauge?.set(ROTATION_PHASE_VALUE[state.rotation.phase]);
    if (previous && sameState(previous, state)) return;
    if (previous && previous.rotation.phase !== state.rotation.phase) {
      log.info(
        {
          phase: state.rotation.phase,
          since: new Date(state.rotation.since).toISOString(),
          roots: trustedRoots(state).length,
          where: this.store.describe(),
        },
        PHASE_MESSAGES[state.rotation.phase],
      );
    } else if (previous && previous.signing.certPem !== state.signing.certPem) {
      log.info(
        { phase: state.rotation.phase, where: this.store.describe() },
        'root rotation: the expired root was replaced at once (nothing it signed was still valid)',
      );
    } else if (!previous && state.rotation.phase !== 'steady') {
      log.info(
        { phase: state.rotation.phase, since: new Date(state.rotation.since).toISOString() },
        'root rotation in progress; resuming',
      );
    }
    this.listener?.(state);
  }

  /** Checks every `intervalMs`; returns the stop function, which waits for a check under way. */
  start(intervalMs: number): () => Promise<void> {
    const timer = setInterval(() => {
      this.check().catch((err: unknown) =>
        log.warn(
          { err: (err as Error).message, where: this.store.describe() },
          'root rotation check failed; will retry',
        ),
      );
    }, intervalMs);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await this.running?.catch(() => undefined);
    };
  }
}
