// The State-of-the-World side of the ADS service: accepts StreamAggregatedResources calls up to
// MAX_SOTW_STREAMS and hands each to a SotwStream (istioctl's debug queries).

import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../log/logger';
import { MAX_SOTW_STREAMS, SOTW_WRITE_TIMEOUT_MS, SotwCall, SotwDeps, SotwStream } from './sotw-stream';

export type SotwSettings = Omit<SotwDeps, 'onClose' | 'writeTimeoutMs' | 'encrypted'> & {
  /** Tests shorten it; SOTW_WRITE_TIMEOUT_MS otherwise. */
  writeTimeoutMs?: number;
  /** Tests lower it; MAX_SOTW_STREAMS otherwise. */
  maxStreams?: number;
};

export class SotwServer {
  readonly streams = new Set<SotwStream>();
  private closed = false;

  constructor(
    private readonly settings: SotwSettings,
    private readonly log: Logger,
  ) {}

  /** `encrypted`: the call came on the TLS port (the port the implementation was registered on). */
  accept(call: SotwCall, encrypted: boolean): void {
    if (this.closed) {
      call.end();
      return;
    }
    const limit = this.settings.maxStreams ?? MAX_SOTW_STREAMS;
    if (this.streams.size >= limit) {
      this.log.warn({ peer: call.getPeer(), limit }, 'SotW stream refused: MAX_SOTW_STREAMS reached');
      this.settings.count('refused_streams');
      call.emit('error', {
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `more than ${limit} concurrent StreamAggregatedResources streams (MAX_SOTW_STREAMS); retry later`,
      });
      return;
    }
    const stream = new SotwStream(call, {
      ...this.settings,
      encrypted,
      writeTimeoutMs: this.settings.writeTimeoutMs ?? SOTW_WRITE_TIMEOUT_MS,
      onClose: (s) => this.streams.delete(s),
    });
    this.streams.add(stream);
    stream.start();
  }

  close(): void {
    this.closed = true;
    for (const s of [...this.streams]) s.end();
  }
}
