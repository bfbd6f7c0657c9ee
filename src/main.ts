// The `istiod-ts` command: picks a subcommand and turns errors into exit codes
// (2 for usage errors, 1 for failures).

import { parseServeOptions, serveHelp } from './config/options';
import { describe, HELP_FLAG, parseFlags, UsageError, type SettingSpec } from './config/settings';
import { scopedLogger } from './log/logger';
import { ListenError } from './net/listen-error';
import { versionInfo } from './server/version';
import { startServer } from './server/server';
import { runTokenCommand } from './cli/token';
import { runXdsClientCommand } from './cli/xds-client';
import { runValidateCommand } from './cli/validate';
import { runExplainCommand } from './cli/explain';
import { runCreateRemoteSecretCommand } from './cli/create-remote-secret';

const log = scopedLogger('default');

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { description: string; run: Command }> = {
  serve: { description: 'run the control plane (default)', run: serve },
  // istiod's image runs `pilot-discovery discovery <flags>`; the same words work here.
  discovery: { description: "istiod's name for serve, so istiod's arguments work unchanged", run: serve },
  token: { description: 'mint a local-mode service-account token, as the kubelet would', run: runTokenCommand },
  'xds-client': { description: 'connect as a ztunnel and print what it is told', run: runXdsClientCommand },
  validate: { description: 'validate Istio YAML offline with the webhook rules', run: runValidateCommand },
  explain: {
    description: "why a node's ztunnel may get an identity's certificate, or why a pod's workload is what it is",
    run: (argv) => runExplainCommand(argv),
  },
  'create-remote-secret': {
    description: "print the Secret that lets a primary read a remote cluster, as istioctl's create-remote-secret",
    run: (argv) => runCreateRemoteSecretCommand(argv),
  },
  version: { description: 'print the version', run: printVersion },
};

const VERSION_FLAGS = {
  help: HELP_FLAG,
} as const satisfies Record<string, SettingSpec>;

function printVersion(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(VERSION_FLAGS, argv);
  if (positional.length > 0) throw new UsageError(`unexpected argument: ${positional[0] ?? ''}`);
  process.stdout.write(
    values.help
      ? `Usage: istiod-ts version\n\nPrints name, version, Node.js version and platform as one JSON line.\n\nFlags:\n${describe(VERSION_FLAGS, '--')}\n`
      : JSON.stringify(versionInfo()) + '\n',
  );
  return Promise.resolve(0);
}

async function serve(argv: string[]): Promise<number> {
  const options = parseServeOptions(argv, process.env);
  if (options.flags.help) {
    process.stdout.write(serveHelp());
    return 0;
  }
  const server = await startServer(options);
  printListeners(server.listeners, options.mode, options.flags.configDir);
  return new Promise<number>((resolve) => {
    server.secureStarted.then(
      () => {
        for (const name of ['secure-grpc', 'webhook']) {
          const l = server.listeners.get(name);
          if (l) process.stdout.write(`${listenerLine(name, l.address)}\n`);
        }
      },
      (err: unknown) => {
        // The TLS listeners bind once the serving certificate exists, after start-up returned; a
        // port that is taken then must still end the process, not leave /ready at 503 forever.
        if (!(err instanceof ListenError)) return;
        process.stderr.write(`istiod-ts: ${listenErrorLine(err)}\n`);
        server.stop().then(
          () => resolve(1),
          () => resolve(1),
        );
      },
    );
    // The first SIGTERM or SIGINT starts a drain bounded by --shutdownDuration; both handlers go
    // so that a second signal gets Node's default action, the usual "press Ctrl-C again to quit now".
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      log.info({ signal }, 'signal received');
      // A drain that ran into the deadline still resolves: forced closes are the plan, not a failure.
      server.stop().then(
        () => resolve(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** The flag that sets each listener's address, so a bind failure names what to change. */
const LISTENER_FLAGS: Record<string, string> = {
  grpc: '--grpcAddr',
  'secure-grpc': '--secureGRPCAddr',
  webhook: '--httpsAddr',
  monitoring: '--monitoringAddr',
  http: '--httpAddr',
};

function listenErrorLine(err: ListenError): string {
  return `${LISTENER_FLAGS[err.listener] ?? err.listener} ${err.message}`;
}

const LISTENER_LABELS: Record<string, string> = {
  grpc: 'gRPC (xDS, plaintext)',
  'secure-grpc': 'secure gRPC (xDS, CA)',
  webhook: 'HTTPS webhook',
  monitoring: 'metrics (/metrics)',
  http: 'ready + debug (/debug/)',
};

function listenerLine(name: string, address: string): string {
  return `  ${(LISTENER_LABELS[name] ?? name).padEnd(24)} ${address}`;
}

function printListeners(listeners: Map<string, { address: string }>, mode: string, dir: string): void {
  const lines = [
    `istiod-ts ${versionInfo().version} started in ${mode} mode${mode === 'local' ? ` (config from ${dir})` : ''}`,
  ];
  for (const [name, l] of listeners)
    if (name !== 'secure-grpc' && name !== 'webhook') lines.push(listenerLine(name, l.address));
  process.stdout.write(lines.join('\n') + '\n');
}

export async function main(argv: string[]): Promise<void> {
  let name = 'serve';
  let rest = argv;
  if (argv[0] !== undefined && !argv[0].startsWith('-')) {
    name = argv[0];
    rest = argv.slice(1);
  }
  const command = COMMANDS[name];
  let code: number;
  if (!command) {
    process.stderr.write(`istiod-ts: unknown command "${name}" (one of ${Object.keys(COMMANDS).join(', ')})\n`);
    code = 2;
  } else {
    try {
      code = await command.run(rest);
    } catch (err) {
      if (err instanceof UsageError) {
        process.stderr.write(`istiod-ts: ${err.message}\n`);
        code = 2;
      } else if (err instanceof ListenError) {
        process.stderr.write(`istiod-ts: ${listenErrorLine(err)}\n`);
        code = 1;
      } else {
        log.error({ err }, 'failed');
        process.stderr.write(`istiod-ts: ${(err as Error).message}\n`);
        code = 1;
      }
    }
  }
  process.exitCode = code;
  // Open handles (watchers, sockets) must not keep a finished command alive. But what the command
  // printed must reach its reader first: writes to a pipe are asynchronous, and exiting at once
  // cut `xds-client --output json | ...` off after the pipe's first 64 KiB.
  if (name !== 'serve' || code !== 0)
    void Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => process.exit(code));
  else process.exit(code);
}

/** Resolves once everything written so far has been handed to the OS (or the reader went away). */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}
