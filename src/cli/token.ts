// `istiod-ts token`: mints a local-mode service-account token (the claims of a Kubernetes
// projected token, signed by the server's token key in --stateDir), so anyone can call the CA
// or xDS locally exactly as ztunnel would.

import { parseFlags, describe, HELP_FLAG, SettingSpec, UsageError } from '../config/settings';
import { loadOrCreateTokenKey, signLocalToken } from '../security/local-jwt';

export const TOKEN_FLAGS = {
  stateDir: { kind: 'string', default: './.istiod-ts', help: "the server's --stateDir (holds the token key)" },
  namespace: { kind: 'string', default: '', help: 'namespace of the service account' },
  serviceAccount: { kind: 'string', default: '', help: 'service account name' },
  pod: { kind: 'string', default: '', help: 'pod name the token is bound to' },
  podUID: { kind: 'string', default: '', help: 'uid of that pod' },
  node: { kind: 'string', default: '', help: 'node the pod runs on' },
  audience: { kind: 'list', default: 'istio-ca', help: 'audiences of the token' },
  ttl: {
    kind: 'duration',
    default: '1h',
    help: 'lifetime of the token',
    check: (v: number) => (v < 1000 ? 'must be at least 1s' : undefined),
  },
  help: HELP_FLAG,
} as const satisfies Record<string, SettingSpec>;

const REQUIRED = ['namespace', 'serviceAccount', 'pod', 'podUID'] as const;

export function tokenHelp(): string {
  return [
    'Usage: istiod-ts token --stateDir D --namespace NS --serviceAccount SA --pod NAME --podUID UID [--node N] [--audience istio-ca] [--ttl 1h]',
    '',
    'Prints a bearer token the local-mode server accepts, as a projected service-account token.',
    '',
    describe(TOKEN_FLAGS, '--'),
    '',
  ].join('\n');
}

/** The token command; a promise because every command main.ts runs is one (this one does no async work). */
export function runTokenCommand(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<number> {
  return Promise.resolve(tokenCommand(argv, out, err));
}

function tokenCommand(argv: string[], out: (s: string) => void, err: (s: string) => void): number {
  try {
    const { values, given, positional } = parseFlags(TOKEN_FLAGS, argv);
    if (values.help) {
      out(tokenHelp());
      return 0;
    }
    if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional[0]}`);
    const missing = REQUIRED.filter((f) => !given.has(f) || values[f].trim() === '');
    if (missing.length > 0) throw new UsageError(`missing ${missing.map((f) => `--${f}`).join(', ')} (see --help)`);
    if (values.audience.length === 0) throw new UsageError('--audience must name at least one audience');
    const key = loadOrCreateTokenKey(values.stateDir);
    const token = signLocalToken(
      key,
      {
        namespace: values.namespace,
        serviceAccount: values.serviceAccount,
        podName: values.pod,
        podUid: values.podUID,
        ...(values.node ? { nodeName: values.node } : {}),
      },
      values.audience,
      Math.floor(values.ttl / 1000),
    );
    out(`${token}\n`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      err(`istiod-ts token: ${e.message}\n`);
      return 2;
    }
    err(`istiod-ts token: ${(e as Error).message}\n`);
    return 1;
  }
}
