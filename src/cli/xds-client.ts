// `istiod-ts xds-client`: connects to the xDS server exactly as ztunnel does, ACKs what it
// receives and prints the workloads, services and policies a node's ztunnel would see; with
// --watch it prints each delta as it arrives.

import { status as grpcStatus } from '@grpc/grpc-js';
import * as fs from 'node:fs';
import { describe, HELP_FLAG, parseFlags, SettingSpec, UsageError } from '../config/settings';
import { AdsClient, AdsClientOptions, DeltaResponse, HeldResources, ztunnelNodeId } from './ads-client';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../contract/xds-resources';
import { readToken, runXdsCertCommand } from './xds-cert';
import { DeltaNamer } from './xds-delta';
import { deltaJson, meshView, renderTable } from './xds-view';

export const XDS_CLIENT_FLAGS = {
  addr: { kind: 'string', default: '', help: 'xDS server HOST:PORT (15012 with --rootCert, 15010 without)' },
  rootCert: {
    kind: 'string',
    default: '',
    help: 'PEM file of the roots that sign the server certificate; empty connects without TLS',
  },
  serverName: {
    kind: 'string',
    default: '',
    help: 'name checked against the server certificate, e.g. istiod.istio-system.svc',
  },
  token: { kind: 'string', default: '', help: "bearer token, or a file holding it (as ztunnel's AUTH_TOKEN)" },
  clusterId: { kind: 'string', default: 'Kubernetes', help: 'clusterid header and CLUSTER_ID metadata' },
  node: { kind: 'string', default: '', help: 'NODE_NAME of the ztunnel to impersonate' },
  namespace: { kind: 'string', default: 'istio-system', help: "the ztunnel's namespace (must match the token's)" },
  pod: { kind: 'string', default: 'ztunnel-xds-client', help: "the ztunnel's pod name" },
  ip: { kind: 'string', default: '1.1.1.1', help: "the ztunnel's INSTANCE_IP" },
  'on-demand': {
    kind: 'list',
    default: '',
    help: 'on-demand Address keys (uid, network/ip or ns/hostname), comma separated; more may follow as arguments',
  },
  watch: { kind: 'bool', default: 'false', help: 'keep the stream open and print each delta' },
  output: {
    kind: 'string',
    default: 'table',
    help: 'table or json',
    check: (v: string) => (v === 'table' || v === 'json' ? undefined : 'must be table or json'),
  },
  timeout: {
    kind: 'duration',
    default: '15s',
    help: 'how long to wait for the first responses',
    check: (v: number) => (v <= 0 ? 'must be greater than 0' : undefined),
  },
  help: HELP_FLAG,
} as const satisfies Record<string, SettingSpec>;

export function xdsClientHelp(): string {
  return [
    'Usage: istiod-ts xds-client --addr HOST:PORT --node NODE [--rootCert FILE] [--serverName NAME] [--token TOKEN]',
    '                           [--namespace NS] [--pod NAME] [--on-demand NAME,...] [--watch] [--output table|json]',
    '',
    "Shows what a node's ztunnel receives: connects as ztunnel does, ACKs every response, prints the result.",
    '`istiod-ts xds-client cert --identity spiffe://...` requests a certificate as the ztunnel would (see cert --help).',
    '',
    describe(XDS_CLIENT_FLAGS, '--'),
    '',
  ].join('\n');
}

type Writer = (s: string) => void;

export async function runXdsClientCommand(
  argv: string[],
  out: Writer = (s) => process.stdout.write(s),
  err: Writer = (s) => process.stderr.write(s),
): Promise<number> {
  if (argv[0] === 'cert') return runXdsCertCommand(argv.slice(1), out, err);
  let client: AdsClient | undefined;
  try {
    const { values, given, positional } = parseFlags(XDS_CLIENT_FLAGS, argv);
    if (values.help) {
      out(xdsClientHelp());
      return 0;
    }
    const missing = (['addr', 'node'] as const).filter((f) => !given.has(f) || values[f].trim() === '');
    if (missing.length > 0) throw new UsageError(`missing ${missing.map((f) => `--${f}`).join(', ')} (see --help)`);
    const onDemand = [...values['on-demand'], ...positional];
    if (positional.length > 0 && !given.has('on-demand'))
      throw new UsageError(`unexpected argument: ${positional[0]} (on-demand names follow --on-demand)`);
    let rootCertPem: string | undefined;
    if (values.rootCert !== '') {
      try {
        rootCertPem = fs.readFileSync(values.rootCert, 'utf8');
      } catch (e) {
        throw new UsageError(`cannot read --rootCert ${values.rootCert}: ${(e as Error).message}`);
      }
    }
    const options: AdsClientOptions = {
      address: values.addr,
      clusterId: values.clusterId,
      node: {
        id: ztunnelNodeId(values.ip, values.pod, values.namespace),
        metadata: {
          NAME: values.pod,
          NAMESPACE: values.namespace,
          INSTANCE_IPS: values.ip,
          NODE_NAME: values.node,
          CLUSTER_ID: values.clusterId,
        },
      },
    };
    if (rootCertPem) options.rootCertPem = rootCertPem;
    if (values.serverName) options.serverName = values.serverName;
    const token = readToken(values.token);
    if (token) options.token = token;
    client = new AdsClient(options);
    return await session(client, onDemand, values.watch, values.output as 'table' | 'json', values.timeout, out, err);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`istiod-ts xds-client: ${e.message}\n`);
      return 2;
    }
    err(`istiod-ts xds-client: ${(e as Error).message}\n`);
    return 1;
  } finally {
    client?.close();
  }
}

/** Runs the stream: initial requests as ztunnel sends them, then prints once or on every delta. */
async function session(
  client: AdsClient,
  onDemand: string[],
  watch: boolean,
  output: 'table' | 'json',
  timeoutMs: number,
  out: Writer,
  err: Writer,
): Promise<number> {
  const held = new HeldResources();
  const namer = new DeltaNamer();
  const firstOf = new Set<string>();
  let onDemandSent = onDemand.length === 0;
  let onDemandAnswered = onDemand.length === 0;
  let initialPrinted = false;

  const printAll = () =>
    out(output === 'json' ? JSON.stringify(meshView(held), null, 2) + '\n' : renderTable(meshView(held)));

  return new Promise<number>((resolveOnce) => {
    // The caller closes the client once this resolves; the stream's CANCELLED status that follows is not news.
    let done = false;
    const resolve = (code: number) => {
      if (done) return;
      done = true;
      resolveOnce(code);
    };
    const timer = setTimeout(() => {
      err(
        `istiod-ts xds-client: no complete answer within ${timeoutMs} ms (got ${[...firstOf].join(', ') || 'nothing'})\n`,
      );
      resolve(1);
    }, timeoutMs);
    const onSignal = () => resolve(0);
    if (watch) process.once('SIGINT', onSignal);

    client.onResponse((r: DeltaResponse) => {
      held.apply(r);
      if (initialPrinted) {
        out(output === 'json' ? JSON.stringify(deltaJson(r)) + '\n' : namer.render(r));
        return;
      }
      if (firstOf.has(ADDRESS_TYPE_URL) && r.type_url === ADDRESS_TYPE_URL && onDemandSent) onDemandAnswered = true;
      firstOf.add(r.type_url);
      if (!onDemandSent && firstOf.has(ADDRESS_TYPE_URL)) {
        // As ztunnel: on-demand lookups are separate requests after the stream is established.
        client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: onDemand });
        onDemandSent = true;
      }
      if (firstOf.has(ADDRESS_TYPE_URL) && firstOf.has(AUTHORIZATION_TYPE_URL) && onDemandAnswered) {
        clearTimeout(timer);
        printAll();
        namer.seed(held);
        initialPrinted = true;
        if (!watch) resolve(0);
      }
    });
    void client.status.then((status) => {
      clearTimeout(timer);
      if (done) return;
      process.removeListener('SIGINT', onSignal);
      if (status.code === grpcStatus.OK) {
        if (!initialPrinted) printAll();
        resolve(0);
        return;
      }
      err(`istiod-ts xds-client: stream ended: ${status.details} (code ${status.code})\n`);
      resolve(1);
    });

    if (onDemand.length > 0) {
      client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['*'], resource_names_unsubscribe: ['*'] });
    } else {
      client.send({ type_url: ADDRESS_TYPE_URL });
    }
    client.send({ type_url: AUTHORIZATION_TYPE_URL });
  });
}
