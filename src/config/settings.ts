// The grammar of a setting: its kind, how a text value becomes a typed one, and how a table of
// settings is parsed from argv or the environment. The tables themselves live in options.ts.

import { parseGoBool } from './bool';
import { parseDuration } from './duration';
import { ListenAddress, parseListenAddress } from './address';

export type SettingKind = 'string' | 'int' | 'bool' | 'duration' | 'addr' | 'list';

export interface SettingSpec {
  kind: SettingKind;
  /** Default as the user would type it; shown by --help. */
  default: string;
  help: string;
  /** Extra check on the parsed value; returns a reason when the value is unacceptable. */
  check?: (value: never) => string | undefined;
}

/** --help, which every command's flag table carries. */
export const HELP_FLAG = {
  kind: 'bool',
  default: 'false',
  help: 'print this help and exit',
} as const satisfies SettingSpec;

export type SettingValue<K extends SettingKind> = K extends 'int'
  ? number
  : K extends 'bool'
    ? boolean
    : K extends 'duration'
      ? number
      : K extends 'addr'
        ? ListenAddress | null
        : K extends 'list'
          ? string[]
          : string;

export type SettingValues<T extends Record<string, SettingSpec>> = {
  -readonly [N in keyof T]: SettingValue<T[N]['kind']>;
};

/** A bad flag or value: the CLI prints the message on one line and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function parseValue(kind: SettingKind, text: string): unknown {
  switch (kind) {
    case 'string':
      return text;
    case 'int': {
      if (!/^-?\d+$/.test(text.trim())) throw new Error(`"${text}" is not an integer`);
      return Number(text.trim());
    }
    case 'bool': {
      // Go's strconv.ParseBool spellings, since istiod's env vars accept them; empty is false.
      const t = text.trim();
      const value = t === '' ? false : parseGoBool(t);
      if (value !== undefined) return value;
      throw new Error(`"${text}" is not a boolean (true or false)`);
    }
    case 'duration':
      return parseDuration(text);
    case 'addr':
      return parseListenAddress(text);
    case 'list':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
  }
}

function convert(spec: SettingSpec, label: string, text: string): unknown {
  let value: unknown;
  try {
    value = parseValue(spec.kind, text);
  } catch (err) {
    throw new UsageError(`invalid value for ${label}: ${(err as Error).message}`);
  }
  const problem = spec.check?.(value as never);
  if (problem) throw new UsageError(`invalid value for ${label}: ${problem}`);
  return value;
}

export function defaults<T extends Record<string, SettingSpec>>(table: T): SettingValues<T> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) out[name] = convert(spec, name, spec.default);
  return out as SettingValues<T>;
}

/** Reads a table of environment variables; unset ones take their defaults. */
export function parseEnv<T extends Record<string, SettingSpec>>(
  table: T,
  env: Record<string, string | undefined>,
): SettingValues<T> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    const raw = env[name];
    out[name] = convert(spec, `env ${name}`, raw ?? spec.default);
  }
  return out as SettingValues<T>;
}

export interface ParsedFlags<T extends Record<string, SettingSpec>> {
  values: SettingValues<T>;
  /** Names given on the command line, for "was this set explicitly" decisions. */
  given: Set<keyof T>;
  positional: string[];
}

/**
 * Parses "--name value", "--name=value", "-name value" (Go's flag package accepts one dash too)
 * and bare boolean flags. Unknown flags are a UsageError naming the flag.
 */
export function parseFlags<T extends Record<string, SettingSpec>>(table: T, argv: string[]): ParsedFlags<T> {
  const values = defaults(table) as Record<string, unknown>;
  const given = new Set<keyof T>();
  const positional: string[] = [];
  let at = 0;
  /** The next word of argv, consumed; undefined past the end. */
  const take = (): string | undefined => argv[at++];
  for (let arg = take(); arg !== undefined; arg = take()) {
    if (arg === '--') {
      positional.push(...argv.slice(at));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const spec = Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
    if (!spec) throw new UsageError(`unknown flag: --${name} (see --help)`);
    let text: string;
    if (eq >= 0) {
      text = body.slice(eq + 1);
    } else if (spec.kind === 'bool') {
      text = 'true';
    } else {
      const next = take();
      if (next === undefined) throw new UsageError(`flag --${name} needs a value`);
      text = next;
    }
    values[name] = convert(spec, `--${name}`, text);
    given.add(name);
  }
  return { values: values as SettingValues<T>, given, positional };
}

/** One line per setting, aligned, for --help. */
export function describe(table: Record<string, SettingSpec>, prefix: string): string {
  const rows = Object.entries(table).map(([name, spec]) => {
    const left = `${prefix}${name}`;
    const def = spec.default === '' ? '' : ` (default ${JSON.stringify(spec.default)})`;
    return [left, `${spec.help}${def}`] as const;
  });
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  return rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`).join('\n');
}
