// `istiod-ts explain identity --node N --identity spiffe://...` and `istiod-ts explain workload NS/POD`:
// why the CA would (not) give a node's ztunnel a certificate for an identity, and why a pod's
// workload has its protocol, services, waypoint and policies. Local mode reads --configDir (and every
// other serve flag and env var) as `serve` does, builds the store and the ambient index once and runs
// the deciding code on them; --server asks a running istiod-ts's /debug/explain instead (the only
// way in Kubernetes mode: the server already holds the cluster's objects).

import { AmbientIndex } from '../ambient/ambient-index';
import { parseServeOptions, SERVE_FLAGS, type ServeOptions } from '../config/options';
import { parseFlags, UsageError } from '../config/settings';
import { Explainer, type ExplainRecord } from '../explain/explainer';
import { ExplainQueryError, identityQuery, workloadQuery, type ExplainQuery } from '../explain/query';
import { exitCodeOf, renderText } from '../explain/render';
import { logs } from '../log/logger';
import { checkMeshConfigFile, createMeshConfigSource } from '../mesh/source';
import { LocalSource } from '../store/local/local-source';
import { ambientFeatures } from '../ambient/settings';
import { MemoryStore } from '../store/memory-store';

type Writer = (s: string) => void;

/** Log levels of a local explain unless --log_output_level says otherwise: stderr carries only problems. */
export const EXPLAIN_LOG_LEVELS = 'default:warn';

/** How long --server may take to answer: the record is built from memory in milliseconds. */
export const EXPLAIN_SERVER_TIMEOUT_MS = 10_000;
/** Largest /debug/explain answer read: a record is bounded by MAX_DECISION_STEPS, far below this. */
export const MAX_EXPLAIN_RESPONSE_BYTES = 8 * 1024 * 1024;

export function explainHelp(): string {
  return [
    'Usage: istiod-ts explain identity --node NODE --identity spiffe://TD/ns/NS/sa/SA [flags]',
    '       istiod-ts explain workload NAMESPACE/POD [flags]',
    '',
    'identity: whether the CA gives a certificate for the identity to the ztunnel on NODE, asked as the',
    "          node's ztunnel pod (the node authorizer's every check, which pod on which node grants it,",
    '          or why none does).',
    "workload: why ztunnel gets the pod's workload as it does: protocol (HBONE or TCP), services,",
    '          waypoint and authorization policies, with every label, annotation and object read.',
    '',
    '  --node         identity: the node the ztunnel runs on',
    '  --identity     identity: the SPIFFE identity it asks for',
    '  -o, --output   text (default) or json (the decision record, as /debug/explain returns it)',
    '  --server       http://HOST:PORT of a running istiod-ts (its --httpAddr): ask its /debug/explain',
    '  -h, --help     print this help and exit',
    '',
    'Without --server, explain reads --configDir and the other serve flags and environment variables',
    '(CA_TRUSTED_NODE_ACCOUNTS, --meshConfig, --domain, CLUSTER_ID, ...) exactly as `serve` would.',
    '',
    'Exit status: 0 allowed (identity) or found (workload), 1 denied or not found, 2 for a bad question.',
    '',
  ].join('\n');
}

interface Args {
  query: ExplainQuery;
  output: 'text' | 'json';
  server?: string;
  /** Everything else, for parseServeOptions. */
  serve: string[];
}

function parseArgs(argv: string[]): Args | 'help' {
  const [kind, ...after] = argv;
  if (kind === undefined || kind === '-h' || kind === '--help') return 'help';
  if (kind !== 'identity' && kind !== 'workload')
    throw new UsageError(`explain what? "${kind}" is neither identity nor workload (see --help)`);
  let rest = after;
  let ref: string | undefined;
  if (kind === 'workload' && rest[0] !== undefined && !rest[0].startsWith('-')) [ref, ...rest] = rest;
  let node: string | undefined;
  let identity: string | undefined;
  let output: Args['output'] = 'text';
  let server: string | undefined;
  const serve: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const value = () => {
      if (eq > 0 && arg.startsWith('--')) return arg.slice(eq + 1);
      const next = rest[++i];
      if (next === undefined) throw new UsageError(`${name} needs a value`);
      return next;
    };
    if (name === '-h' || name === '--help') return 'help';
    else if (name === '--node' && kind === 'identity') node = value();
    else if (name === '--identity' && kind === 'identity') identity = value();
    else if (name === '--server') server = value();
    else if (name === '-o' || name === '--output') {
      const o = value();
      if (o !== 'text' && o !== 'json') throw new UsageError(`--output must be text or json, got "${o}"`);
      output = o;
    } else serve.push(arg);
  }
  if (kind === 'workload' && ref === undefined) {
    // NS/POD after the flags: the one word the serve flags leave over (they know which take values).
    const { positional } = parseFlags(SERVE_FLAGS, serve);
    if (positional.length === 1 && positional[0] !== undefined) {
      ref = positional[0];
      serve.splice(serve.lastIndexOf(ref), 1);
    }
  }
  const query = kind === 'identity' ? identityQuery(node, identity) : workloadQuery(ref);
  return { query, output, serve, ...(server !== undefined ? { server } : {}) };
}

/** The record from the folder --configDir, through the same store, index and authorizer `serve` builds. */
async function explainLocally(options: ServeOptions, query: ExplainQuery): Promise<ExplainRecord> {
  const { flags, env } = options;
  checkMeshConfigFile(flags.meshConfig);
  const store = new MemoryStore();
  const mesh = await createMeshConfigSource({
    file: flags.meshConfig,
    mode: 'local',
    podNamespace: env.POD_NAMESPACE,
    revision: env.REVISION,
    store,
  });
  const source = new LocalSource({ dir: flags.configDir, writer: store, watch: false });
  await source.start();
  await source.stop();
  const index = new AmbientIndex({
    store,
    mesh,
    clusterId: env.CLUSTER_ID,
    domain: flags.domain,
    systemNamespace: env.POD_NAMESPACE,
    revision: env.REVISION,
    enableDryRun: env.AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY,
    features: ambientFeatures(env),
  });
  try {
    const explainer = new Explainer({
      store,
      trustedAccounts: env.CA_TRUSTED_NODE_ACCOUNTS,
      trustDomains: () => [mesh.current().trustDomain, ...mesh.current().trustDomainAliases],
      ambientSettings: () => index.settings,
    });
    return explainer.explain(query);
  } finally {
    index.close();
    mesh.stop();
  }
}

/** The URL of /debug/explain on `server` for `query`. */
export function explainUrl(server: string, query: ExplainQuery): URL {
  let url: URL;
  try {
    url = new URL('/debug/explain', server);
  } catch {
    throw new UsageError(`--server "${server}" is not a URL: give http://HOST:PORT`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server "${server}" is not http(s)://HOST:PORT`);
  if (query.kind === 'identity') {
    url.searchParams.set('identity', query.identity);
    url.searchParams.set('node', query.node);
  } else url.searchParams.set('workload', `${query.namespace}/${query.name}`);
  return url;
}

/** The limits of asking a server; tests pass small ones. */
export interface RemoteLimits {
  timeoutMs: number;
  maxBytes: number;
}

const REMOTE_LIMITS: RemoteLimits = { timeoutMs: EXPLAIN_SERVER_TIMEOUT_MS, maxBytes: MAX_EXPLAIN_RESPONSE_BYTES };

/** Asks a running server; its 400 is a bad question (exit 2), anything else unexpected a failure. */
export async function explainRemotely(
  server: string,
  query: ExplainQuery,
  limits: RemoteLimits = REMOTE_LIMITS,
): Promise<ExplainRecord> {
  const url = explainUrl(server, query);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { signal });
    text = await boundedText(res, limits.maxBytes);
  } catch (err) {
    const why = signal.aborted ? `no answer within ${limits.timeoutMs} ms` : (err as Error).message;
    throw new Error(`cannot ask ${url.origin}/debug/explain: ${why}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${url.origin}/debug/explain answered ${res.status} with a body that is not JSON (not istiod-ts?)`);
  }
  const error = (body as { error?: unknown } | null)?.error;
  if (res.status === 400 && typeof error === 'string') throw new ExplainQueryError(error);
  if (res.status !== 200) throw new Error(`${url.origin}/debug/explain answered ${res.status}: ${text.slice(0, 200)}`);
  return body as ExplainRecord;
}

async function boundedText(res: Response, maxBytes: number): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`the answer is longer than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function runExplainCommand(
  argv: string[],
  out: Writer = (s) => process.stdout.write(s),
  err: Writer = (s) => process.stderr.write(s),
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  let record: ExplainRecord;
  let output: Args['output'];
  try {
    const args = parseArgs(argv);
    if (args === 'help') {
      out(explainHelp());
      return 0;
    }
    output = args.output;
    if (args.server !== undefined) {
      if (args.serve.length > 0)
        throw new UsageError(`${args.serve[0] ?? ''} has no effect with --server (the server's own flags apply)`);
      record = await explainRemotely(args.server, args.query);
    } else {
      const options = parseServeOptions(args.serve, env);
      const levelsGiven = args.serve.some((a) => a === '--log_output_level' || a.startsWith('--log_output_level='));
      logs.configure(levelsGiven ? options.flags.log_output_level : EXPLAIN_LOG_LEVELS);
      if (options.mode !== 'local')
        throw new UsageError(
          'give --configDir DIR to explain a folder of manifests, or --server http://HOST:PORT to ask a running istiod-ts',
        );
      record = await explainLocally(options, args.query);
    }
  } catch (e) {
    if (e instanceof UsageError || e instanceof ExplainQueryError) {
      err(`istiod-ts explain: ${e.message}\n`);
      return 2;
    }
    err(`istiod-ts explain: ${(e as Error).message}\n`);
    return 1;
  }
  out(output === 'json' ? `${JSON.stringify(record, null, 2)}\n` : renderText(record));
  return exitCodeOf(record);
}
