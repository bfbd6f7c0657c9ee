// `istiod-ts validate -f FILE|DIR|- [-o text|json]`: runs the webhook's validators offline on
// YAML or JSON manifests (multi-document, List kinds), like `istioctl validate`. Exit status 1
// when any object is invalid, 0 otherwise, 2 for usage errors.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isObject, JsonObject } from '../webhook/validators/common/fields';
import { FieldError } from '../webhook/validators/common/report';
import { parseApiVersion, unknownTopLevelKeys, validateConfig } from '../webhook/validators/registry';

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];
/** Objects without a namespace are checked as if applied to this one, as kubectl would. */
const DEFAULT_NAMESPACE = 'default';
const ISTIO_GROUP = /(^|\.)istio\.io$/;
const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

export interface ObjectReport {
  file: string;
  /** Index of the YAML document in the file; "2.items[1]" for an item of a List. */
  document: string;
  kind: string;
  namespace: string;
  name: string;
  errors: FieldError[];
  warnings: string[];
}

export function validateHelp(): string {
  return [
    'Usage: istiod-ts validate -f FILE|DIR|- [-f ...] [-o text|json]',
    '',
    'Validates Istio resources offline with the same rules as the validating webhook.',
    'Files may hold several YAML documents and List objects; directories are read recursively',
    `(${MANIFEST_EXTENSIONS.join(', ')}); "-" reads standard input. Kinds outside Istio's API groups are skipped.`,
    '',
    '  -f, --filename   a file, a directory or "-" (repeatable)',
    '  -o, --output     text (default) or json',
    '  -h, --help       print this help and exit',
    '',
    'Exit status: 0 when every object is valid, 1 when any is invalid, 2 for usage errors.',
    '',
  ].join('\n');
}

class UsageError extends Error {}

interface Args {
  files: string[];
  output: 'text' | 'json';
  help: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { files: [], output: 'text', help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === undefined) break;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${name} needs a value`);
      return next;
    };
    if (name === '-h' || name === '--help') args.help = true;
    else if (name === '-f' || name === '--filename') args.files.push(value());
    else if (name === '-o' || name === '--output') {
      const o = value();
      if (o !== 'text' && o !== 'json') throw new UsageError(`--output must be text or json, got "${o}"`);
      args.output = o;
    } else throw new UsageError(`unknown argument: ${arg}`);
  }
  if (!args.help && args.files.length === 0) throw new UsageError('give at least one -f FILE|DIR|- (see --help)');
  return args;
}

function manifestFiles(target: string): string[] {
  if (target === '-') return ['-'];
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return [target];
  const out: string[] = [];
  for (const entry of fs.readdirSync(target, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(target, entry.name);
    if (entry.isDirectory()) out.push(...manifestFiles(full));
    else if (MANIFEST_EXTENSIONS.includes(path.extname(entry.name).toLowerCase())) out.push(full);
  }
  return out;
}

function isIstioKind(object: JsonObject): boolean {
  const { group } = parseApiVersion(typeof object['apiVersion'] === 'string' ? object['apiVersion'] : '');
  return ISTIO_GROUP.test(group) || group === GATEWAY_API_GROUP;
}

function checkObject(file: string, document: string, object: unknown): ObjectReport | undefined {
  const base = {
    file,
    document,
    kind: '',
    namespace: '',
    name: '',
    errors: [] as FieldError[],
    warnings: [] as string[],
  };
  if (!isObject(object)) return { ...base, errors: [{ path: '', message: 'the document is not an object' }] };
  const meta = isObject(object['metadata']) ? object['metadata'] : {};
  const kind = typeof object['kind'] === 'string' ? object['kind'] : '';
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  const namespace = typeof meta['namespace'] === 'string' && meta['namespace'] ? meta['namespace'] : DEFAULT_NAMESPACE;
  const report: ObjectReport = { ...base, kind, namespace, name };
  if (!isIstioKind(object)) return undefined;
  // Validate as it would be applied: in its namespace, or the default one.
  const verdict = validateConfig({ ...object, metadata: { ...meta, namespace } });
  if (verdict.outcome !== 'validated') report.errors.push({ path: '', message: verdict.message });
  else {
    report.errors.push(...verdict.result.errors);
    report.warnings.push(...verdict.result.warnings);
    if (report.errors.length === 0) {
      for (const k of unknownTopLevelKeys(object))
        report.errors.push({ path: k, message: `unknown field "${k}" on ${kind} resource ${namespace}/${name}` });
    }
  }
  return report;
}

/** Validates every Istio object in a file's text. */
export function validateManifestText(file: string, text: string): ObjectReport[] {
  const reports: ObjectReport[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) {
      reports.push({
        file,
        document: String(i),
        kind: '',
        namespace: '',
        name: '',
        errors: doc.errors.map((e) => ({ path: '', message: `YAML: ${e.message}` })),
        warnings: [],
      });
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    if (
      isObject(value) &&
      typeof value['kind'] === 'string' &&
      value['kind'].endsWith('List') &&
      Array.isArray(value['items'])
    ) {
      value['items'].forEach((item, j) => {
        const r = checkObject(file, `${i}.items[${j}]`, item);
        if (r) reports.push(r);
      });
      return;
    }
    const r = checkObject(file, String(i), value);
    if (r) reports.push(r);
  });
  return reports;
}

function formatText(reports: ObjectReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const where = `${r.file}[${r.document}] ${r.kind || '?'} ${r.namespace}/${r.name}`;
    for (const e of r.errors) lines.push(`${where}: error: ${e.path ? `${e.path}: ` : ''}${e.message}`);
    for (const w of r.warnings) lines.push(`${where}: warning: ${w}`);
  }
  const invalid = reports.filter((r) => r.errors.length > 0).length;
  lines.push(
    `${reports.length} object(s) checked, ${invalid} invalid, ${reports.reduce((n, r) => n + r.warnings.length, 0)} warning(s)`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * The validate command; a promise because every command main.ts runs is one (this one does no async
 * work), so an unreadable file rejects it as before.
 */
export function runValidateCommand(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
  stdin: () => string = () => fs.readFileSync(0, 'utf8'),
): Promise<number> {
  try {
    return Promise.resolve(validateCommand(argv, out, err, stdin));
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
}

function validateCommand(
  argv: string[],
  out: (s: string) => void,
  err: (s: string) => void,
  stdin: () => string,
): number {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    err(`istiod-ts validate: ${(e as Error).message}\n`);
    return 2;
  }
  if (args.help) {
    out(validateHelp());
    return 0;
  }
  const reports: ObjectReport[] = [];
  for (const target of args.files) {
    let files: string[];
    try {
      files = manifestFiles(target);
    } catch (e) {
      err(`istiod-ts validate: cannot read ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
      return 1;
    }
    for (const file of files) {
      const text = file === '-' ? stdin() : fs.readFileSync(file, 'utf8');
      reports.push(...validateManifestText(file === '-' ? '<stdin>' : file, text));
    }
  }
  out(args.output === 'json' ? `${JSON.stringify(reports, null, 2)}\n` : formatText(reports));
  return reports.some((r) => r.errors.length > 0) ? 1 : 0;
}
