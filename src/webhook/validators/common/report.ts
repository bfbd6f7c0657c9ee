// The result every validator returns: errors that reject the object, each with the field path
// that a user has to fix, and warnings that are shown but do not reject it.

export interface FieldError {
  /** Dotted path from the object root, e.g. `spec.rules[0].from[1].source.principals[2]`. */
  path: string;
  message: string;
}

export interface ValidationResult {
  errors: FieldError[];
  warnings: string[];
}

/**
 * Most errors one validation reports; later ones are only counted ("... and N more errors").
 * istiod lists every error, but a denial naming the first hundred already says what to fix, and
 * an object with thousands of bad entries would otherwise get a response larger than itself.
 */
export const MAX_REPORTED_ERRORS = 100;
/**
 * Most warnings returned; later ones are counted. The API server passes at most 4 KiB of warning
 * text on to its client (items over 256 characters are cut when the total is over), so more
 * than this never reaches a user anyway.
 */
export const MAX_REPORTED_WARNINGS = 50;
/**
 * Longest path or message kept, in characters; the rest is replaced by how much was left out.
 * Paths into deeply nested values and messages quoting long user values are the only texts that
 * get near it; with the counts above it bounds a denial to about a megabyte.
 */
export const MAX_REPORTED_TEXT_LENGTH = 4096;

/** `text`, or its first MAX_REPORTED_TEXT_LENGTH characters and how many more there were. */
export function clip(text: string): string {
  if (text.length <= MAX_REPORTED_TEXT_LENGTH) return text;
  return `${text.slice(0, MAX_REPORTED_TEXT_LENGTH)}... (${text.length - MAX_REPORTED_TEXT_LENGTH} more characters)`;
}

/** Collects errors and warnings while a validator walks an object. */
export class Report implements ValidationResult {
  /** The first MAX_REPORTED_ERRORS errors; `errorCount` counts them all. */
  readonly errors: FieldError[] = [];
  readonly warnings: string[] = [];
  private omittedErrors = 0;
  private omittedWarnings = 0;

  error(path: string, message: string): void {
    if (this.errors.length >= MAX_REPORTED_ERRORS) this.omittedErrors++;
    else this.errors.push({ path: clip(path), message: clip(message) });
  }

  warn(path: string, message: string): void {
    if (this.warnings.length >= MAX_REPORTED_WARNINGS) this.omittedWarnings++;
    else this.warnings.push(path ? `${clip(path)}: ${clip(message)}` : clip(message));
  }

  /** Every error reported so far, including those past the cap. */
  get errorCount(): number {
    return this.errors.length + this.omittedErrors;
  }

  get ok(): boolean {
    return this.errorCount === 0;
  }

  /** The errors and warnings, each list ending with how many were left out, if any. */
  result(): ValidationResult {
    const errors = [...this.errors];
    if (this.omittedErrors > 0) errors.push({ path: '', message: `... and ${this.omittedErrors} more errors` });
    const warnings = [...this.warnings];
    if (this.omittedWarnings > 0) warnings.push(`... and ${this.omittedWarnings} more warnings`);
    return { errors, warnings };
  }
}

/** `spec` + `rules` -> `spec.rules`. */
export function at(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** `spec.rules` + 0 -> `spec.rules[0]`. */
export function idx(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** A map entry: `spec.portLevelMtls` + `8080` -> `spec.portLevelMtls[8080]`. */
export function key(path: string, k: string): string {
  return `${path}[${JSON.stringify(k)}]`;
}

export function formatError(e: FieldError): string {
  return e.path ? `${e.path}: ${e.message}` : e.message;
}
