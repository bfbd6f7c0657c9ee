// Remote secrets as `istioctl create-remote-secret` writes them: a Secret in the system namespace,
// labelled istio/multiCluster=true, whose every data key is a cluster id and whose value is a
// kubeconfig for that cluster. Pure: reading a Secret's data into cluster id -> kubeconfig text, and
// the text into a client configuration that reads no file and runs no program.
//
// A kubeconfig holds credentials, so nothing here puts its text into an error: a YAML error names a
// line and column only, never the parser's message (which quotes the source), and
// redactCredentials() takes a cluster's tokens and keys out of any message logged about it.

import { createHash } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { parse, YAMLError } from 'yaml';

/** The label that marks a Secret as a remote secret, and its selector. */
export const MULTICLUSTER_SECRET_LABEL = 'istio/multiCluster';
export const MULTICLUSTER_SECRET_SELECTOR = `${MULTICLUSTER_SECRET_LABEL}=true`;

/**
 * Largest kubeconfig (decoded) read from one key. One made by create-remote-secret is a few KiB (a
 * CA certificate and a token); a Secret may hold 1 MiB, and each kubeconfig is parsed twice.
 */
export const MAX_REMOTE_KUBECONFIG_BYTES = 64 * 1024;
/**
 * Remote clusters one server joins, across all remote secrets. Each costs a client, a set of watches
 * and a store holding that cluster's pods, so the number is bounded like any other input.
 */
export const MAX_REMOTE_CLUSTERS = 64;
/** Longest cluster id: the longest Secret data key the API server accepts. */
export const MAX_CLUSTER_ID_LENGTH = 253;
/** A Secret data key's grammar (the API server's own rule), which a cluster id must keep. */
const CLUSTER_ID = /^[-._a-zA-Z0-9]+$/;

/** Why a key of a remote secret is not joined; the label of istiod_ts_remote_secret_errors_total. */
export const REMOTE_SECRET_ERROR_REASONS = [
  'local-cluster-id',
  'invalid-cluster-id',
  'not-base64',
  'too-large',
  'too-many-clusters',
  'invalid-kubeconfig',
  'unsafe-kubeconfig',
  'duplicate-cluster-id',
] as const;
export type RemoteSecretErrorReason = (typeof REMOTE_SECRET_ERROR_REASONS)[number];

/** One key of a remote secret that is not joined, and why (never the value). */
export interface RemoteSecretProblem {
  key: string;
  reason: RemoteSecretErrorReason;
  message: string;
}

export interface ParsedRemoteSecret {
  /** Cluster id -> kubeconfig text, in key order. */
  clusters: Map<string, string>;
  problems: RemoteSecretProblem[];
}

/** A kubeconfig that cannot be used; the message names what is wrong, never a value. */
export class RemoteKubeconfigError extends Error {
  constructor(
    readonly reason: RemoteSecretErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'RemoteKubeconfigError';
  }
}

/** Why a string cannot be a cluster id; undefined when it can. */
export function clusterIdProblem(id: string): string | undefined {
  if (id === '') return 'is empty';
  if (id.length > MAX_CLUSTER_ID_LENGTH) return `is longer than ${MAX_CLUSTER_ID_LENGTH} characters`;
  if (!CLUSTER_ID.test(id) || id === '.' || id === '..') return 'may hold only letters, digits, "-", "_" and "."';
  return undefined;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a remote secret's data. A key equal to the local cluster's id is skipped, as istiod skips it
 * (it would overwrite the config cluster); so are keys that are not cluster ids, values that are
 * not base64 or are too large, and keys past MAX_REMOTE_CLUSTERS. Each skipped key is a problem
 * naming the key.
 */
export function parseRemoteSecret(data: unknown, localClusterId: string): ParsedRemoteSecret {
  const clusters = new Map<string, string>();
  const problems: RemoteSecretProblem[] = [];
  if (typeof data !== 'object' || data === null) return { clusters, problems };
  const problem = (key: string, reason: RemoteSecretErrorReason, message: string) =>
    problems.push({ key, reason, message: `key "${key}": ${message}` });
  // The API server keeps data keys sorted; sorting here keeps the order whatever the source.
  for (const key of Object.keys(data).sort()) {
    const value: unknown = (data as Record<string, unknown>)[key];
    const idProblem = clusterIdProblem(key);
    if (idProblem !== undefined) {
      problem(key.slice(0, 64), 'invalid-cluster-id', `not a cluster id: it ${idProblem}`);
      continue;
    }
    if (key === localClusterId) {
      problem(key, 'local-cluster-id', 'is this cluster (CLUSTER_ID); ignored, it would replace the config cluster');
      continue;
    }
    if (typeof value !== 'string' || !BASE64.test(value)) {
      problem(key, 'not-base64', 'the value is not base64');
      continue;
    }
    // Checked on the encoded length first, so an oversized value is never decoded.
    if (Math.floor((value.length * 3) / 4) - (value.match(/=*$/)?.[0].length ?? 0) > MAX_REMOTE_KUBECONFIG_BYTES) {
      problem(key, 'too-large', `the kubeconfig is larger than ${MAX_REMOTE_KUBECONFIG_BYTES} bytes`);
      continue;
    }
    if (clusters.size >= MAX_REMOTE_CLUSTERS) {
      problem(key, 'too-many-clusters', `more than ${MAX_REMOTE_CLUSTERS} clusters in one secret`);
      continue;
    }
    let text: string;
    try {
      text = utf8.decode(Buffer.from(value, 'base64'));
    } catch {
      problem(key, 'invalid-kubeconfig', 'the kubeconfig is not UTF-8 text');
      continue;
    }
    clusters.set(key, text);
  }
  return { clusters, problems };
}

/** A digest of a kubeconfig: an unchanged one is not a change (istiod compares the same way). */
export function kubeconfigDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

/**
 * Fields that make the client read a file or run a program named by whoever wrote the secret, which
 * istiod refuses too (PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS is not offered). client-node
 * would even read a token-file while parsing.
 */
const UNSAFE_USER_FIELDS = ['exec', 'token-file', 'tokenFile', 'client-certificate', 'client-key'] as const;
const UNSAFE_CLUSTER_FIELDS = ['certificate-authority'] as const;

function unsafeField(doc: Json): string | undefined {
  for (const [i, user] of entries(doc['users']).entries()) {
    const fields = isObject(user['user']) ? user['user'] : {};
    for (const field of UNSAFE_USER_FIELDS) if (fields[field] !== undefined) return `users[${i}].user.${field}`;
    const provider = fields['auth-provider'];
    // OIDC reads no file and runs no program; every other provider may (as istiod's rule).
    if (provider !== undefined && (!isObject(provider) || provider['name'] !== 'oidc'))
      return `users[${i}].user.auth-provider (only oidc is allowed)`;
  }
  for (const [i, cluster] of entries(doc['clusters']).entries()) {
    const fields = isObject(cluster['cluster']) ? cluster['cluster'] : {};
    for (const field of UNSAFE_CLUSTER_FIELDS)
      if (fields[field] !== undefined) return `clusters[${i}].cluster.${field}`;
  }
  return undefined;
}

/** client-node's own messages that name a missing field and nothing else are safe to pass on. */
const SAFE_CLIENT_NODE_MESSAGE = /^(?:clusters|users|contexts)\[\d+\](?:\.[a-z-]+)+ is missing$/;

export interface RemoteKubeconfig {
  kubeConfig: KubeConfig;
  /** The API server's URL, safe to show. */
  server: string;
  /** Every secret the kubeconfig carries (tokens, passwords, keys), for redactCredentials. */
  credentials: string[];
}

/**
 * Builds a client configuration from a remote kubeconfig's text. Throws a RemoteKubeconfigError whose
 * message names the problem (a line and column, a field) and never quotes the text.
 */
export function buildRemoteKubeConfig(text: string): RemoteKubeconfig {
  if (text.trim() === '') throw new RemoteKubeconfigError('invalid-kubeconfig', 'the kubeconfig is empty');
  let doc: unknown;
  try {
    doc = parse(text, { prettyErrors: false, maxAliasCount: 16 });
  } catch (err) {
    // Only the position: the parser's message quotes the line, which may hold the token.
    const at = err instanceof YAMLError ? ` at ${lineAndColumn(text, err.pos[0])}` : '';
    throw new RemoteKubeconfigError('invalid-kubeconfig', `the kubeconfig is not valid YAML${at}`);
  }
  if (!isObject(doc)) throw new RemoteKubeconfigError('invalid-kubeconfig', 'the kubeconfig is not a YAML mapping');
  const unsafe = unsafeField(doc);
  if (unsafe !== undefined)
    throw new RemoteKubeconfigError(
      'unsafe-kubeconfig',
      `the kubeconfig sets ${unsafe}, which reads a local file or runs a program; not allowed in a remote secret`,
    );
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    throw new RemoteKubeconfigError(
      'invalid-kubeconfig',
      `the kubeconfig cannot be loaded${SAFE_CLIENT_NODE_MESSAGE.test(message) ? `: ${message}` : ''}`,
    );
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster)
    throw new RemoteKubeconfigError('invalid-kubeconfig', 'the kubeconfig has no current-context naming a cluster');
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new RemoteKubeconfigError('invalid-kubeconfig', "the current cluster's server is not a URL");
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new RemoteKubeconfigError('invalid-kubeconfig', "the current cluster's server is not an http(s) URL");
  if (url.username !== '' || url.password !== '')
    throw new RemoteKubeconfigError('unsafe-kubeconfig', "the current cluster's server URL carries credentials");
  return { kubeConfig, server: url.origin + url.pathname.replace(/\/+$/, ''), credentials: credentialsOf(kubeConfig) };
}

/** Shorter strings are not redacted: they would blank out ordinary words, and are no credential. */
const MIN_REDACTED_LENGTH = 6;

function credentialsOf(kc: KubeConfig): string[] {
  const found = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.length >= MIN_REDACTED_LENGTH) found.add(v);
  };
  for (const user of kc.getUsers()) {
    add(user.token);
    add(user.password);
    add(user.keyData);
    add(user.certData);
    if (user.username !== undefined && user.password !== undefined)
      add(Buffer.from(`${user.username}:${user.password}`).toString('base64'));
    const config = (user.authProvider as { config?: unknown } | undefined)?.config;
    if (isObject(config)) for (const v of Object.values(config)) add(v);
  }
  // Longest first, so a credential that contains another is removed whole.
  return [...found].sort((a, b) => b.length - a.length);
}

/** Replaces every credential in a text (an error message about that cluster) with "[redacted]". */
export function redactCredentials(text: string, credentials: readonly string[]): string {
  let out = text;
  for (const c of credentials) out = out.split(c).join('[redacted]');
  return out;
}
