// Leadership in local mode: one replica, always the leader, so singleton controllers just run.

import { scopedLogger } from '../log/logger';
import type { LeaderElector } from '../contract/leader';

const log = scopedLogger('leader');

export class SoleLeader implements LeaderElector {
  private readonly stops: (() => void | Promise<void>)[] = [];

  runWhileLeader(lease: string, run: () => () => void | Promise<void>): void {
    log.info({ lease }, 'leading (single replica)');
    this.stops.push(run());
  }

  async stop(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse()) await stop();
  }
}
