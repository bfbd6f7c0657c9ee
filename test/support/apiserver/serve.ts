// Runs the test API server by hand, so a developer can point istiod-ts at a "cluster":
//
//   npm run build
//   node dist/test/support/apiserver/serve.js [--port N] [--seed DIR_OF_YAML]
//        [--token TOKEN=NAMESPACE/SERVICEACCOUNT[/POD_NAME[/POD_UID]]]...
//   istiod-ts --kubeconfig <the printed path>
//
// Without --seed it holds the namespaces istio-system and default and an empty `istio` ConfigMap.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { TestApiServer } from './server';
import { findResourceByKind } from './resources';
import { namespace } from './fixtures';
import { API_SERVER_AUDIENCE, serviceAccountIdentity, type TokenIdentity } from './tokens';

interface Args {
  port: number;
  seed?: string;
  tokens: [string, TokenIdentity][];
}

/** Audiences a hand-registered token is valid for: the CA's and the API server's. */
const TOKEN_AUDIENCES = ['istio-ca', API_SERVER_AUDIENCE];

function parseToken(text: string): [string, TokenIdentity] {
  const m = /^([^=]+)=([^/]+)\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(text);
  if (!m) throw new Error(`--token "${text}": expected TOKEN=NAMESPACE/SERVICEACCOUNT[/POD_NAME[/POD_UID]]`);
  const [, token, ns, sa, podName, podUid] = m;
  return [
    token!,
    serviceAccountIdentity({
      namespace: ns!,
      serviceAccount: sa!,
      ...(podName ? { podName } : {}),
      ...(podUid ? { podUid } : {}),
      audiences: TOKEN_AUDIENCES,
    }),
  ];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { port: 0, tokens: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--port') {
      args.port = Number(value());
      if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535)
        throw new Error(`--port: "${argv[i]}" is not a port number`);
    } else if (a === '--seed') args.seed = value();
    else if (a === '--token') args.tokens.push(parseToken(value()));
    else if (a === '--help' || a === '-h') {
      process.stdout.write(
        'usage: node dist/test/support/apiserver/serve.js [--port N] [--seed DIR_OF_YAML] [--token TOKEN=NS/SA[/POD[/UID]]]...\n',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (try --help)`);
  }
  return args;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((entry) => {
      const p = path.join(dir, entry);
      if (statSync(p).isDirectory()) return yamlFiles(p);
      return /\.ya?ml$/.test(entry) ? [p] : [];
    })
    .sort();
}

/** A YAML document as read: nothing guarantees it names a kind. */
type Manifest = { apiVersion?: string; kind?: string; metadata: { name: string; namespace?: string } };

function seedFrom(server: TestApiServer, dir: string): number {
  let count = 0;
  for (const file of yamlFiles(dir)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const m = doc.toJS() as Manifest | null;
      if (!m) continue;
      const { apiVersion = '', kind = '' } = m;
      const r = findResourceByKind(apiVersion, kind);
      if (!r || r.createOnly) {
        process.stderr.write(`${file}: skipping ${apiVersion} ${kind} (not served)\n`);
        continue;
      }
      if (r.namespaced && !m.metadata.namespace) m.metadata.namespace = 'default';
      server.put({ ...m, apiVersion, kind });
      count++;
    }
  }
  return count;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const server = await TestApiServer.start({ port: args.port, bookmarkIntervalMs: 60_000 });
  server.put(namespace('istio-system'));
  server.put(namespace('default'));
  server.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'istio', namespace: 'istio-system' },
    data: { mesh: '' },
  });
  const seeded = args.seed ? seedFrom(server, args.seed) : 0;
  for (const [token, identity] of args.tokens) server.registerToken(token, identity);
  const kubeconfig = server.writeKubeconfig();
  process.stdout.write(
    `test API server at ${server.url} (${seeded} objects seeded)\nkubeconfig: ${kubeconfig}\n  istiod-ts --kubeconfig ${kubeconfig}\n`,
  );
  const shutdown = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`serve: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
