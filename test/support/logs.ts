// Reads what the process logs: every JSON line written after captureLogs(), parsed, until restore().

import { Writable } from 'node:stream';
import pino from 'pino';
import { logs } from '../../src/log/logger';

export function captureLogs(): { lines: () => Record<string, unknown>[]; restore: () => void } {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      out.push(String(chunk));
      done();
    },
  });
  logs.setDestination(sink);
  return {
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    restore: () => logs.setDestination(pino.destination({ fd: 2, sync: true })),
  };
}
