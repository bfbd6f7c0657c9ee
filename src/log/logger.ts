// Structured JSON logs with a `scope` on every line and a level per scope, like istiod's
// --log_output_level. Levels can be changed at runtime through /debug/logging.

import pino, { Logger, Level, DestinationStream } from 'pino';
import { jsonLineToText } from './text-format';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const DEFAULT_SCOPE = 'default';

// istiod spells some levels differently; accept its words too.
const LEVEL_ALIASES: Record<string, LogLevel> = { none: 'silent', warning: 'warn' };

function toLevel(text: string): LogLevel {
  const t = text.trim().toLowerCase();
  const level = (LEVEL_ALIASES[t] ?? t) as LogLevel;
  if (!LOG_LEVELS.includes(level)) throw new Error(`unknown log level "${text}" (one of ${LOG_LEVELS.join(', ')})`);
  return level;
}

/** Parses "default:info,ca:debug" (or a bare "debug" for the default scope). */
export function parseLogLevels(spec: string): Map<string, LogLevel> {
  const levels = new Map<string, LogLevel>();
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    const scope = colon < 0 ? DEFAULT_SCOPE : part.slice(0, colon).trim();
    const level = toLevel(colon < 0 ? part : part.slice(colon + 1));
    if (!/^[a-z][a-z0-9._-]*$/i.test(scope)) throw new Error(`invalid log scope "${scope}"`);
    levels.set(scope, level);
  }
  return levels;
}

/**
 * Forwards to a destination that tests can swap without re-creating the loggers modules hold, in
 * JSON (as pino wrote it) or in istiod's text layout (--log_as_json=false).
 */
class SwitchableStream implements DestinationStream {
  text = false;
  constructor(public target: DestinationStream) {}
  write(line: string): void {
    this.target.write(this.text ? jsonLineToText(line) : line);
  }
}

class LogRegistry {
  private readonly stream: SwitchableStream;
  private readonly root: Logger;
  private readonly scopes = new Map<string, Logger>();
  private readonly configured = new Map<string, LogLevel>();

  constructor() {
    // Sync writes to stderr: stdout stays free for command output, and lines are not lost when
    // the process exits right after logging.
    this.stream = new SwitchableStream(pino.destination({ fd: 2, sync: true }));
    this.root = pino(
      {
        level: 'trace',
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      this.stream,
    );
  }

  /** JSON lines (the default) or istiod's text layout. */
  setFormat(format: 'json' | 'text'): void {
    this.stream.text = format === 'text';
  }

  /** Sends every log line to another destination; tests use it to read what was logged. */
  setDestination(destination: DestinationStream): void {
    this.stream.target = destination;
  }

  scope(name: string): Logger {
    let log = this.scopes.get(name);
    if (!log) {
      log = this.root.child({ scope: name });
      log.level = this.configured.get(name) ?? this.configured.get(DEFAULT_SCOPE) ?? 'info';
      this.scopes.set(name, log);
    }
    return log;
  }

  /** Applies a --log_output_level spec: the default scope's level reaches every unnamed scope. */
  configure(spec: string): void {
    const levels = parseLogLevels(spec);
    for (const [scope, level] of levels) this.configured.set(scope, level);
    for (const [name, log] of this.scopes) {
      log.level = this.configured.get(name) ?? this.configured.get(DEFAULT_SCOPE) ?? 'info';
    }
  }

  setLevel(scope: string, level: string): LogLevel {
    const parsed = toLevel(level);
    this.configured.set(scope, parsed);
    if (scope === DEFAULT_SCOPE) {
      for (const [name, log] of this.scopes)
        if (!this.configured.has(name) || name === DEFAULT_SCOPE) log.level = parsed;
    }
    this.scope(scope).level = parsed;
    return parsed;
  }

  levels(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, log] of [...this.scopes].sort(([a], [b]) => a.localeCompare(b))) out[name] = log.level;
    return out;
  }
}

export const logs = new LogRegistry();

/** The logger of a scope; modules call this once at load time. */
export function scopedLogger(scope: string): Logger {
  return logs.scope(scope);
}

export type { Level };
