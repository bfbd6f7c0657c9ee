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

/** Collects errors and warnings while a validator walks an object. */
export class Report implements ValidationResult {
  readonly errors: FieldError[] = [];
  readonly warnings: string[] = [];

  error(path: string, message: string): void {
    this.errors.push({ path, message });
  }

  warn(path: string, message: string): void {
    this.warnings.push(path ? `${path}: ${message}` : message);
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }

  result(): ValidationResult {
    return { errors: [...this.errors], warnings: [...this.warnings] };
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
