// `istiod-ts create-remote-secret`: run against a remote cluster, prints the Secret that lets a
// primary control plane read it, as `istioctl create-remote-secret` does and in the same bytes:
//
//   istiod-ts create-remote-secret --kubeconfig remote.yaml --name cluster-2 | kubectl --context primary apply -f -
//
// On the remote cluster it ensures the reader service account (and its RBAC) and a token Secret
// for it; the printed Secret carries a kubeconfig with that token. The token goes to stdout only,
// never to stderr or a log: stdout is the credential, stderr is for people.

import { KubeConfig } from '@kubernetes/client-node';
import { describe, HELP_FLAG, parseFlags, UsageError, type SettingSpec } from '../config/settings';
import { KubeApiError, KubeClient } from '../store/kube/client';
import { KubeUnreachableError, loadKubeConfig } from '../store/kube/config';
import { KubeWriter } from '../store/kube/writes';
import {
  clusterUid,
  CONFIG_SERVICE_ACCOUNT,
  ensureServiceAccount,
  findOrCreateTokenSecret,
  READER_SERVICE_ACCOUNT,
  RemoteSecretError,
  waitForTokenData,
  type AccountOptions,
} from './remote-secret-account';
import {
  CONFIG_SECRET_NAME,
  REMOTE_SECRET_PREFIX,
  renderKubeconfig,
  renderRemoteSecret,
  type RemoteAuth,
} from './remote-secret-yaml';

type Writer = (s: string) => void;

/** istioctl's flag names, so its documented command lines work with `istiod-ts` in its place. */
export const CREATE_REMOTE_SECRET_FLAGS = {
  kubeconfig: { kind: 'string', default: '', help: "the REMOTE cluster's kubeconfig ($KUBECONFIG, ~/.kube/config)" },
  context: { kind: 'string', default: '', help: 'the kubeconfig context of the remote cluster (its current context)' },
  name: {
    kind: 'string',
    default: '',
    help: "the remote cluster's name (its CLUSTER_ID), a DNS-1123 label; default the uid of its kube-system namespace",
  },
  namespace: { kind: 'string', default: '', help: 'the control plane namespace on both clusters (istio-system)' },
  istioNamespace: { kind: 'string', default: 'istio-system', help: "istioctl's -i: the same as --namespace" },
  type: { kind: 'string', default: 'remote', help: 'remote (istio-remote-secret-<name>) or config (istio-kubeconfig)' },
  'service-account': {
    kind: 'string',
    default: '',
    help: `the account whose token is used: ${READER_SERVICE_ACCOUNT} (--type remote) or ${CONFIG_SERVICE_ACCOUNT} (--type config)`,
  },
  'create-service-account': {
    kind: 'bool',
    default: 'true',
    help: `create ${READER_SERVICE_ACCOUNT} and its ClusterRole and binding when it is missing`,
  },
  server: {
    kind: 'string',
    default: '',
    help: "the remote API server's address as the primary reaches it (default: the kubeconfig's)",
  },
  'tls-server-name': {
    kind: 'string',
    default: '',
    help: "the name to check in the API server's certificate (tls-server-name)",
  },
  'secret-name': {
    kind: 'string',
    default: '',
    help: 'a kubernetes.io/service-account-token Secret of the account to take the token from',
  },
  'auth-type': {
    kind: 'string',
    default: 'bearer-token',
    help: 'bearer-token, or plugin (an auth-provider, no token)',
  },
  'auth-plugin-name': { kind: 'string', default: '', help: 'with --auth-type plugin: the auth-provider name' },
  'auth-plugin-config': {
    kind: 'list',
    default: '',
    help: 'with --auth-type plugin: key=value,... for the auth-provider',
  },
  'token-wait': {
    kind: 'duration',
    default: '10s',
    help: 'how long to wait for the token controller to fill a new token Secret',
  },
  help: HELP_FLAG,
} as const satisfies Record<string, SettingSpec>;

/** istioctl's short flags, rewritten to the long ones parseFlags knows. */
const SHORT_FLAGS: Record<string, string> = { '-n': '--namespace', '-i': '--istioNamespace', '-h': '--help' };

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** istioctl's limit: the name is also the cluster id in labels and annotations, so a label, not just a Secret name. */
const DNS1123_LABEL_MAX = 63;

export function createRemoteSecretHelp(): string {
  return [
    'Usage: istiod-ts create-remote-secret --kubeconfig REMOTE.yaml [--context C] --name CLUSTER [flags]',
    '',
    'Prints the Secret that lets a primary control plane read a remote cluster, as',
    '`istioctl create-remote-secret` prints it. Apply it to the PRIMARY cluster:',
    '',
    '  istiod-ts create-remote-secret --kubeconfig remote.yaml --name cluster-2 | kubectl --context primary apply -f -',
    '',
    `On the remote cluster it finds (or, with --create-service-account, creates) ${READER_SERVICE_ACCOUNT}`,
    'with its read-only ClusterRole, and a token Secret for it, whose token the printed kubeconfig holds.',
    '',
    describe(CREATE_REMOTE_SECRET_FLAGS, '--'),
    '',
    'Exit status: 0 printed, 1 the remote cluster could not give a token (the reason on stderr), 2 a bad flag.',
    '',
  ].join('\n');
}

interface Plan {
  kubeConfig: KubeConfig;
  name: string;
  namespace: string;
  secretName: string;
  account: AccountOptions;
  server: string;
  tlsServerName: string;
  auth: 'bearer-token' | { name: string; config: Record<string, string> };
  tokenWaitMs: number;
}

function parse(argv: string[]): Plan | 'help' {
  const {
    values: v,
    given,
    positional,
  } = parseFlags(
    CREATE_REMOTE_SECRET_FLAGS,
    argv.map((a) => SHORT_FLAGS[a] ?? a),
  );
  if (v.help) return 'help';
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional[0] ?? ''}`);
  if (v.name !== '' && (v.name.length > DNS1123_LABEL_MAX || !DNS1123_LABEL.test(v.name)))
    throw new UsageError(
      `--name ${JSON.stringify(v.name)} is not a DNS-1123 label (lower-case letters, digits and '-', ` +
        `starting and ending with a letter or digit, at most ${DNS1123_LABEL_MAX} characters)`,
    );
  if (v.type !== 'remote' && v.type !== 'config')
    throw new UsageError(`--type ${JSON.stringify(v.type)}: one of remote, config`);
  if (v['auth-type'] !== 'bearer-token' && v['auth-type'] !== 'plugin')
    throw new UsageError(`--auth-type ${JSON.stringify(v['auth-type'])}: one of bearer-token, plugin`);
  const pluginFlags = (['auth-plugin-name', 'auth-plugin-config'] as const).filter((f) => given.has(f));
  if (v['auth-type'] !== 'plugin' && pluginFlags.length > 0)
    throw new UsageError(`--${pluginFlags[0] ?? ''} needs --auth-type plugin`);
  if (v['auth-type'] === 'plugin' && v['auth-plugin-name'] === '')
    throw new UsageError('--auth-type plugin needs --auth-plugin-name');
  const config: Record<string, string> = {};
  for (const pair of v['auth-plugin-config']) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--auth-plugin-config ${JSON.stringify(pair)} is not key=value`);
    config[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const namespace = v.namespace || v.istioNamespace;
  if (!DNS1123_LABEL.test(namespace))
    throw new UsageError(`--namespace ${JSON.stringify(namespace)} is not a namespace name`);

  let kubeConfig: KubeConfig;
  try {
    kubeConfig = loadKubeConfig(v.kubeconfig);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (v.context !== '') {
    if (!kubeConfig.getContextObject(v.context))
      throw new UsageError(
        `--context ${v.context}: no such context in the kubeconfig (it has ${kubeConfig.contexts.map((c) => c.name).join(', ') || 'none'})`,
      );
    kubeConfig.setCurrentContext(v.context);
    if (!kubeConfig.getCurrentCluster()?.server)
      throw new UsageError(`--context ${v.context}: its cluster is not in the kubeconfig, or has no server`);
  }
  return {
    kubeConfig,
    name: v.name,
    namespace,
    secretName: v.type === 'config' ? CONFIG_SECRET_NAME : '',
    account: {
      namespace,
      serviceAccount: v['service-account'] || (v.type === 'config' ? CONFIG_SERVICE_ACCOUNT : READER_SERVICE_ACCOUNT),
      createServiceAccount: v['create-service-account'],
      secretName: v['secret-name'],
    },
    server: v.server,
    tlsServerName: v['tls-server-name'],
    auth: v['auth-type'] === 'plugin' ? { name: v['auth-plugin-name'], config } : 'bearer-token',
    tokenWaitMs: v['token-wait'],
  };
}

/** The Secret's YAML and, when the address is one only this machine reaches, a warning. */
async function build(plan: Plan): Promise<{ yaml: string; warning?: string }> {
  const client = new KubeClient(plan.kubeConfig, 'istiod-ts/create-remote-secret');
  // An operator is waiting: a few quick attempts, not a controller's patience.
  const writer = new KubeWriter(client, { maxAttempts: 3, backoff: { initialMs: 200, maxMs: 1_000 } });
  const clusterName = plan.name || (await clusterUid(writer));
  await ensureServiceAccount(writer, plan.account);
  const tokenSecret = await findOrCreateTokenSecret(writer, plan.account);
  const bearer = plan.auth === 'bearer-token';
  const data = await waitForTokenData(writer, tokenSecret, bearer, plan.tokenWaitMs);
  // The kubeconfig's own text, not the client's trimmed copy: istioctl writes the address as given.
  const server = plan.server || (plan.kubeConfig.getCurrentCluster()?.server ?? client.server);
  const auth: RemoteAuth =
    plan.auth === 'bearer-token'
      ? { type: 'bearer-token', token: (data.token ?? Buffer.alloc(0)).toString('utf8') }
      : { type: 'plugin', ...plan.auth };
  const kubeconfig = renderKubeconfig({
    clusterName,
    server,
    caData: data.caData,
    ...(plan.tlsServerName ? { tlsServerName: plan.tlsServerName } : {}),
    auth,
  });
  const yaml = renderRemoteSecret({
    secretName: plan.secretName || `${REMOTE_SECRET_PREFIX}${clusterName}`,
    namespace: plan.namespace,
    clusterName,
    kubeconfig,
  });
  const loopback = plan.server === '' && (server.includes('127.0.0.1') || server.includes('localhost'));
  return loopback
    ? {
        yaml,
        warning:
          `the remote API server is ${server} in the kubeconfig, which the primary's istiod cannot reach from ` +
          "its pod; pass --server with an address it can reach (with Kubernetes in Docker, the API server container's IP)",
      }
    : { yaml };
}

/** Why a call to the remote cluster failed, and what to check; never the request's body. */
function failureMessage(err: unknown, plan: Plan): string {
  if (err instanceof RemoteSecretError || err instanceof KubeUnreachableError) return err.message;
  const server = plan.kubeConfig.getCurrentCluster()?.server ?? '';
  if (err instanceof KubeApiError && (err.status === 401 || err.status === 403))
    return (
      `${err.message}; the kubeconfig's user must be able to read namespaces, ServiceAccounts and Secrets and ` +
      `create Secrets in ${plan.namespace} (and ServiceAccounts, ClusterRoles and ClusterRoleBindings when ` +
      '--create-service-account creates the reader) on the remote cluster'
    );
  if (err instanceof KubeApiError) return err.message;
  return `cannot reach the remote cluster's API server at ${server}: ${(err as Error).message}`;
}

export async function runCreateRemoteSecretCommand(
  argv: string[],
  out: Writer = (s) => process.stdout.write(s),
  err: Writer = (s) => process.stderr.write(s),
): Promise<number> {
  const prefix = 'istiod-ts create-remote-secret: ';
  let plan: Plan | 'help';
  try {
    plan = parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`${prefix}${e.message}\n`);
    return 2;
  }
  if (plan === 'help') {
    out(createRemoteSecretHelp());
    return 0;
  }
  try {
    const { yaml, warning } = await build(plan);
    if (warning !== undefined) err(`${prefix}warning: ${warning}\n`);
    out(yaml);
    return 0;
  } catch (e) {
    err(`${prefix}${failureMessage(e, plan)}\n`);
    return 1;
  }
}
