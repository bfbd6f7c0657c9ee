// Every flag and environment variable of `istiod-ts serve`, with its default and meaning.
// Names follow istiod's where istiod has one, so operators can reuse what they know.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseLogLevels } from '../log/logger';
import { readTlsFiles } from './tls-files';
import { certProviderProblem, ISTIOD_TLS_DIR, servingCertFiles } from './serving-cert-source';
import { describe, HELP_FLAG, parseEnv, parseFlags, SettingSpec, SettingValues, UsageError } from './settings';
import { configMapNameProblem, namespaceNameProblem, taintKeyProblem } from './kube-names';
import { prefixProblem } from './cidr';
import { unservedSwitches, type UnservedSwitch } from './istiod-switches';

const atLeast = (min: number) => (v: number) => (v < min ? `must be at least ${min}` : undefined);
const positive = (v: number) => (v <= 0 ? 'must be greater than 0' : undefined);

/** Scope levels are checked while the flags are read, so a typo exits 2 before anything starts. */
const logLevels = (v: string): string | undefined => {
  try {
    parseLogLevels(v);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

/**
 * The folder is checked while the flags are read, before the CA writes anything to --stateDir:
 * a mistyped --configDir must not leave a new root behind it.
 */
const readableFolder = (v: string): string | undefined => {
  if (v === '') return undefined;
  try {
    if (!fs.statSync(v).isDirectory()) return `${v} is not a folder`;
    fs.accessSync(v, fs.constants.R_OK | fs.constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${v} does not exist` : `${v} cannot be read (${code ?? 'error'})`;
  }
};

/** A file named by a flag must exist and be readable when the flags are read, before anything starts. */
const readableFile = (v: string): string | undefined => {
  if (v === '') return undefined;
  try {
    if (!fs.statSync(v).isFile()) return `${v} is not a file`;
    fs.accessSync(v, fs.constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${v} does not exist` : `${v} cannot be read (${code ?? 'error'})`;
  }
};

/** istiod's --clusterAliases map: "alias=clusterID" pairs, neither side empty. */
const aliasPairs = (pairs: string[]): string | undefined => {
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1) return `"${pair}" is not alias=clusterID`;
  }
  return undefined;
};

/** The --clusterAliases pairs as alias -> cluster ID. */
export function clusterAliasMap(pairs: readonly string[]): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    out.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return out;
}

/**
 * istiod's default drain window: long enough for an admission review or a CSR in flight to be
 * answered and for every xDS stream to end with a status, well inside Kubernetes' default 30 s
 * terminationGracePeriodSeconds.
 */
export const DEFAULT_SHUTDOWN_DURATION = '10s';

export const SERVE_FLAGS = {
  grpcAddr: { kind: 'addr', default: ':15010', help: 'plaintext gRPC (xDS) listener; empty disables it' },
  secureGRPCAddr: { kind: 'addr', default: ':15012', help: 'TLS gRPC (xDS and CA) listener; empty disables it' },
  httpsAddr: { kind: 'addr', default: ':15017', help: 'HTTPS listener for the validating webhook' },
  monitoringAddr: { kind: 'addr', default: ':15014', help: 'HTTP listener for /metrics and /version' },
  httpAddr: { kind: 'addr', default: ':8080', help: 'HTTP listener for /ready and /debug/' },
  meshConfig: {
    kind: 'string',
    default: './etc/istio/config/mesh',
    help: 'meshConfig file; when absent, ConfigMap istio[-<rev>] key "mesh" is watched',
  },
  configDir: {
    kind: 'string',
    default: '',
    help: 'local mode: read Kubernetes YAML manifests from this folder instead of a cluster',
    check: readableFolder,
  },
  stateDir: {
    kind: 'string',
    default: './.istiod-ts',
    help: "local mode: the CA's key material, root cert and token key",
  },
  kubeconfig: {
    kind: 'string',
    default: '',
    help: 'kubeconfig file; default is in-cluster config, then $KUBECONFIG, then ~/.kube/config',
  },
  domain: { kind: 'string', default: 'cluster.local', help: 'DNS domain suffix of the cluster' },
  cniNamespace: {
    kind: 'string',
    default: '',
    help: 'namespace of the istio-cni pods the node untaint controller watches; empty means POD_NAMESPACE',
    check: (v: string) => (v === '' ? undefined : namespaceNameProblem(v)),
  },
  log_output_level: {
    kind: 'string',
    default: 'default:info',
    help: 'levels per scope, e.g. "default:info,ca:debug"',
    check: logLevels,
  },
  keepaliveMaxServerConnectionAge: {
    kind: 'duration',
    default: '30m',
    help: 'close gRPC connections after this age (with jitter) so clients rebalance',
    check: positive,
  },
  shutdownDuration: {
    kind: 'duration',
    default: DEFAULT_SHUTDOWN_DURATION,
    help: 'on SIGTERM/SIGINT, how long in-flight requests and streams get to finish before what is left is closed',
    check: positive,
  },
  log_as_json: {
    kind: 'bool',
    default: 'true',
    help: "log lines as JSON; false writes istiod's tab-separated text lines (time, level, scope, message, fields)",
  },
  tlsCertFile: {
    kind: 'string',
    default: '',
    help: "PEM certificate chain for istiod's own TLS listeners (secure gRPC, webhook) instead of one issued by the mesh CA; needs --tlsKeyFile; re-read when it changes",
    check: readableFile,
  },
  tlsKeyFile: { kind: 'string', default: '', help: 'PEM private key of --tlsCertFile', check: readableFile },
  caCertFile: {
    kind: 'string',
    default: '',
    help: "PEM CA that signed --tlsCertFile, written as the webhooks' caBundle; default: the last certificate of --tlsCertFile",
    check: readableFile,
  },
  clusterAliases: {
    kind: 'list',
    default: '',
    help: 'alias=clusterID pairs: a caller whose clusterid header names an alias of this cluster is accepted as this cluster',
    check: aliasPairs,
  },
  debugAllowRemote: { kind: 'bool', default: 'false', help: 'serve /debug/ to non-loopback callers too' },
  help: HELP_FLAG,
} as const satisfies Record<string, SettingSpec>;

export const SERVE_ENV = {
  // Identity of this replica, as the chart sets it.
  POD_NAMESPACE: { kind: 'string', default: 'istio-system', help: 'namespace istiod-ts runs in' },
  POD_NAME: { kind: 'string', default: '', help: 'pod name of this replica (leader election identity)' },
  REVISION: { kind: 'string', default: 'default', help: 'control plane revision' },
  CLUSTER_ID: { kind: 'string', default: 'Kubernetes', help: 'id of the cluster this control plane runs in' },
  SHARED_MESH_CONFIG: {
    kind: 'string',
    default: '',
    help: 'ConfigMap in POD_NAMESPACE whose "mesh" key is layered under the primary meshConfig',
  },
  // Remote clusters (store/kube/remote-clusters.ts), istiod's name and default.
  PILOT_REMOTE_CLUSTER_TIMEOUT: {
    kind: 'duration',
    default: '30s',
    help: 'Kubernetes mode: how long a remote cluster joined by a remote secret (labelled istio/multiCluster=true in POD_NAMESPACE) may take to list its objects before the server is ready without them; 0 waits for every remote cluster',
    check: (v: number) => (v < 0 ? 'must be 0 (wait for every remote cluster) or a positive duration' : undefined),
  },
  EXTERNAL_ISTIOD: {
    kind: 'bool',
    default: 'false',
    help: "Kubernetes mode: also write the root certificate ConfigMaps into each remote cluster whose POD_NAMESPACE Namespace names this CLUSTER_ID (or '*') in annotation topology.istio.io/controlPlaneClusters, under a leader election held in that cluster (istiod's name and meaning)",
  },
  // CA.
  ENABLE_CA_SERVER: { kind: 'bool', default: 'true', help: 'serve IstioCertificateService' },
  CA_TRUSTED_NODE_ACCOUNTS: {
    kind: 'list',
    default: '',
    help: 'ns/sa list allowed to impersonate identities on their own node; unset means "<POD_NAMESPACE>/ztunnel"',
  },
  CITADEL_SELF_SIGNED_CA_CERT_TTL: {
    kind: 'duration',
    default: '87600h',
    help: "lifetime of the self-signed root (and of istiod's serving certificate)",
    check: positive,
  },
  CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: {
    kind: 'duration',
    default: '1h',
    help: 'how often the self-signed root is checked for rotation (docs/ca.md); 0 turns rotation off',
    check: (v: number) => (v < 0 ? 'must be 0 (off) or a positive duration' : undefined),
  },
  CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: {
    kind: 'int',
    default: '20',
    help: 'the self-signed root is rotated once this last percentage of its lifetime is reached',
    check: (v: number) => (v < 1 || v > 100 ? 'must be a percentage from 1 to 100' : undefined),
  },
  CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY: {
    kind: 'duration',
    default: '24h',
    help: 'how long a new self-signed root is trusted everywhere before it signs; at least DEFAULT_WORKLOAD_CERT_TTL, so every workload renews once and receives it (docs/ca.md)',
    check: (v: number) => (v < 0 ? 'must be 0 or a positive duration' : undefined),
  },
  CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE: {
    kind: 'int',
    default: '2048',
    help: 'RSA key size of the self-signed root',
    check: atLeast(2048),
  },
  CITADEL_SELF_SIGNED_CA_KEY_TYPE: {
    kind: 'string',
    default: 'RSA',
    help: 'key type of a new self-signed root: RSA or ECDSA (P-256)',
    check: (v: string) => (['RSA', 'ECDSA'].includes(v) ? undefined : 'must be RSA or ECDSA'),
  },
  CA_NODE_RATE_LIMIT: {
    kind: 'int',
    default: '0',
    help: 'certificates per second each node (or non-ztunnel caller identity) may be issued, token bucket with a burst of max(limit, 110); over it a call gets RESOURCE_EXHAUSTED; 0 is off',
    check: (v: number) => (v < 0 ? 'must be 0 (off) or a positive number of certificates per second' : undefined),
  },
  DEFAULT_WORKLOAD_CERT_TTL: {
    kind: 'duration',
    default: '24h',
    help: 'workload certificate lifetime when the CSR asks for none',
    check: positive,
  },
  MAX_WORKLOAD_CERT_TTL: {
    kind: 'duration',
    default: '2160h',
    help: 'longest workload certificate lifetime a CSR may ask for',
    check: positive,
  },
  ROOT_CA_DIR: {
    kind: 'string',
    default: './etc/cacerts',
    help: 'plugged-in CA files: ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem, or tls.crt, tls.key, ca.crt',
  },
  PILOT_CERT_PROVIDER: {
    kind: 'string',
    default: 'istiod',
    help: `who issues istiod's serving certificate: istiod (the mesh CA) or custom (mounted in ${ISTIOD_TLS_DIR}: tls.crt, tls.key, ca.crt); --tlsCertFile, then a certificate mounted there, win over either`,
    check: certProviderProblem,
  },
  ISTIO_MULTIROOT_MESH: {
    kind: 'bool',
    default: 'false',
    help: "let a plugged-in CA's root-cert.pem gain or lose roots without a restart, one step of a rotation at a time (docs/ca.md); meshConfig caCertificates still never reach ztunnel, as in istiod",
  },
  TOKEN_AUDIENCES: { kind: 'list', default: 'istio-ca', help: 'audiences accepted on bearer tokens' },
  PILOT_CA_CERT_CONFIGMAP: {
    kind: 'string',
    default: 'istio-ca-root-cert',
    help: 'ConfigMap the root certificate is written to in every namespace',
  },
  PILOT_ENABLE_CA_CRL: {
    kind: 'bool',
    default: 'true',
    help: 'publish ca-crl.pem from a plugged-in CA folder as a ConfigMap in every namespace (Kubernetes) or in --stateDir (local mode)',
  },
  PILOT_CRL_CONFIGMAP: {
    kind: 'string',
    default: 'istio-ca-crl',
    help: 'name of the ConfigMap the plugged-in CA CRL is written to in every namespace',
    check: configMapNameProblem,
  },
  ISTIOD_CUSTOM_HOST: { kind: 'list', default: '', help: "extra DNS names on istiod's serving certificate" },
  // Validating webhook.
  VALIDATION_WEBHOOK_CONFIG_NAME: {
    kind: 'string',
    default: 'istio-istio-system',
    help: 'when non-empty (Kubernetes mode), keep the caBundle and failurePolicy of the ValidatingWebhookConfigurations labelled istio.io/rev=<REVISION>',
  },
  // xDS.
  PILOT_DEBOUNCE_AFTER: {
    kind: 'duration',
    default: '100ms',
    help: 'quiet window that coalesces changes into one push',
  },
  PILOT_DEBOUNCE_MAX: {
    kind: 'duration',
    default: '10s',
    help: 'longest a change may wait for a quiet window',
    check: positive,
  },
  ISTIO_GPRC_MAXSTREAMS: {
    kind: 'int',
    default: '100000',
    help: 'concurrent gRPC streams per connection',
    check: positive,
  },
  ISTIO_GPRC_MAXRECVMSGSIZE: {
    kind: 'int',
    default: '4194304',
    help: 'largest gRPC message accepted, bytes',
    check: positive,
  },
  XDS_AUTH: { kind: 'bool', default: 'true', help: 'require authentication on xDS streams' },
  ENABLE_DEBUG_ON_HTTP: {
    kind: 'bool',
    default: 'true',
    help: 'serve /debug/ on httpAddr and monitoringAddr (false: neither, as istiod)',
  },
  PILOT_ENABLE_XDS_IDENTITY_CHECK: {
    kind: 'bool',
    default: 'true',
    help: "require node metadata NAMESPACE to equal the caller's namespace",
  },
  // Node untaint controller (src/controllers/untaint/), istiod's names and defaults.
  PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: {
    kind: 'bool',
    default: 'false',
    help: 'Kubernetes mode, leader of istio-node-untaint only: remove the taint PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME from a node once its istio-cni pod is Ready',
  },
  PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: {
    kind: 'string',
    default: 'cni.istio.io/not-ready',
    help: 'key of the taint the node untaint controller removes (every effect of it; other taints stay)',
    check: taintKeyProblem,
  },
  // Ambient index.
  AMBIENT_ENABLE_MULTI_NETWORK: {
    kind: 'bool',
    default: 'false',
    help: 'serve the workloads and GLOBAL services of remote clusters and networks (docs/multicluster.md); off, only this cluster is served, as istiod',
  },
  AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: {
    kind: 'bool',
    default: 'false',
    help: 'send AuthorizationPolicies annotated istio.io/dry-run=true to ztunnel with dry_run set (ztunnel only logs them)',
  },
  AMBIENT_ENABLE_STATUS: {
    kind: 'bool',
    default: 'true',
    help: 'write ZtunnelAccepted and WaypointAccepted (AuthorizationPolicy), istio.io/WaypointBound (Service, ServiceEntry, WorkloadEntry), istio.io/WaypointMissing and istio.io/VisibilityApplied (ServiceEntry) status conditions, on the leader of istio-status-leader; local mode shows them on /debug/status',
  },
  PILOT_AUTO_ALLOW_WAYPOINT_POLICY: {
    kind: 'bool',
    default: 'false',
    help: "send each waypoint with pods an ALLOW policy istio_allow_waypoint_<ns>_<name> from its pods' service accounts, listed on every workload behind it: with any other ALLOW policy, traffic that skips the waypoint is denied",
  },
  PILOT_ENABLE_SERVICEENTRY_SELECT_PODS: {
    kind: 'bool',
    default: 'true',
    help: "a ServiceEntry's workloadSelector selects pods (false: WorkloadEntries only)",
  },
  PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES: {
    kind: 'bool',
    default: 'true',
    help: "a Kubernetes Service's selector selects WorkloadEntries (false: pods only)",
  },
  // ServiceEntry IP auto-allocation (src/controllers/ipallocate/), istiod's names and defaults.
  PILOT_ENABLE_IP_AUTOALLOCATE: {
    kind: 'bool',
    default: 'true',
    help: 'give ServiceEntries without spec.addresses (resolution other than NONE) a VIP per host in status.addresses, so ztunnel can capture their traffic; false: neither allocate nor use allocated addresses (as istiod)',
  },
  PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: {
    kind: 'string',
    default: '240.240.0.0/16',
    help: 'IPv4 range for auto-allocated ServiceEntry addresses; must not overlap any real address in the cluster',
    check: (v: string) => prefixProblem('IPv4', v),
  },
  PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: {
    kind: 'string',
    default: '2001:2::/48',
    help: 'IPv6 range for auto-allocated ServiceEntry addresses; must not overlap any real address in the cluster',
    check: (v: string) => prefixProblem('IPv6', v),
  },
} as const satisfies Record<string, SettingSpec>;

export type ServeFlags = SettingValues<typeof SERVE_FLAGS>;
export type ServeEnv = SettingValues<typeof SERVE_ENV>;

export interface ServeOptions {
  flags: ServeFlags;
  env: ServeEnv;
  /** Local mode reads --configDir; Kubernetes mode watches a cluster. */
  mode: 'local' | 'kubernetes';
  /** Names of flags given explicitly on the command line. */
  given: ReadonlySet<string>;
  /** istiod switches the environment sets that istiod-ts does not honour (istiod-switches.ts): warned at start. */
  unserved: readonly UnservedSwitch[];
}

/**
 * Local mode keeps its CA and token key in --stateDir: the folder, or the nearest folder above it
 * that exists (it is created), must be a writable folder. Checked before anything is written.
 */
function stateDirProblem(dir: string): string | undefined {
  let at = path.resolve(dir);
  for (;;) {
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return `${at} cannot be read (${code ?? 'error'})`;
    }
    if (st) {
      if (!st.isDirectory())
        return at === path.resolve(dir)
          ? `${dir} is not a folder`
          : `${at} is not a folder, so ${dir} cannot be created`;
      try {
        fs.accessSync(at, fs.constants.W_OK | fs.constants.X_OK);
      } catch {
        return `${at} is not writable`;
      }
      return undefined;
    }
    const parent = path.dirname(at);
    if (parent === at) return undefined;
    at = parent;
  }
}

/** Where local mode's listeners bind unless their flag is given. */
export const LOCAL_MODE_HOST = '127.0.0.1';

const LISTENER_FLAGS = ['grpcAddr', 'secureGRPCAddr', 'httpsAddr', 'monitoringAddr', 'httpAddr'] as const;

export function parseServeOptions(argv: string[], env: Record<string, string | undefined>): ServeOptions {
  const { values, given, positional } = parseFlags(SERVE_FLAGS, argv);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional[0]}`);
  const envValues = parseEnv(SERVE_ENV, env);
  if (env['CA_TRUSTED_NODE_ACCOUNTS'] === undefined) {
    // istiod's chart always sets <ns>/ztunnel; we make that the default so a bare binary behaves
    // like a charted one. Setting the variable to "" disables impersonation.
    envValues.CA_TRUSTED_NODE_ACCOUNTS = [`${envValues.POD_NAMESPACE}/ztunnel`];
  }
  // istiod's --cniNamespace defaults to its own namespace, and an empty value means the same.
  if (values.cniNamespace === '') values.cniNamespace = envValues.POD_NAMESPACE;
  if ((values.tlsCertFile === '') !== (values.tlsKeyFile === ''))
    throw new UsageError('--tlsCertFile and --tlsKeyFile go together: give both or neither');
  if (values.caCertFile !== '' && values.tlsCertFile === '')
    throw new UsageError('--caCertFile is the CA of --tlsCertFile: give --tlsCertFile and --tlsKeyFile too');
  try {
    const files = servingCertFiles({ ...values, provider: envValues.PILOT_CERT_PROVIDER });
    if (files) readTlsFiles(files);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.configDir !== '') {
    const problem = stateDirProblem(values.stateDir);
    if (problem) throw new UsageError(`invalid value for --stateDir: ${problem}`);
    // Local mode is a laptop or a test: its CA signs for anyone holding a token from --stateDir and
    // its debug pages are open, so listeners not set explicitly bind loopback only. Kubernetes
    // mode keeps istiod's ":port" (every interface), which the Service in front of it needs.
    for (const name of LISTENER_FLAGS) {
      const addr = values[name];
      if (!given.has(name) && addr && addr.host === '') values[name] = { host: LOCAL_MODE_HOST, port: addr.port };
    }
  }
  return {
    flags: values,
    env: envValues,
    mode: values.configDir !== '' ? 'local' : 'kubernetes',
    given: given,
    unserved: unservedSwitches(env),
  };
}

export function serveHelp(): string {
  return [
    'istiod-ts: an Istio-compatible control plane for ambient mode',
    '',
    'Usage: istiod-ts [serve|discovery] [flags]',
    '       istiod-ts token|validate|xds-client|version [flags]   (each has --help)',
    '',
    'Flags:',
    describe(SERVE_FLAGS, '--'),
    '',
    'Environment:',
    describe(SERVE_ENV, ''),
    '',
  ].join('\n');
}
