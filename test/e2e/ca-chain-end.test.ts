// A plugged-in CA chain that ends while the server runs: from that moment CreateCertificate is
// refused (test/integration/ca/plugged-in-chain.test.ts), and /ready and /debug/ca say why.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { opensslChain, writeCacerts } from '../support/ca/openssl-ca';
import { DEMO, LOOPBACK_LISTENER_ARGS, ServerProcess, waitForStatus } from '../support/cli';

/** How long after the start the chain's intermediate ends. */
const CHAIN_LEFT_MS = 6000;

test('/ready turns 503 naming the expired chain, and /debug/ca says the CA cannot issue', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-chain-end-'));
  const cacerts = path.join(dir, 'cacerts');
  fs.mkdirSync(cacerts);
  const now = Date.now();
  const chain = opensslChain({ notBefore: new Date(now - 86_400_000), notAfter: new Date(now + CHAIN_LEFT_MS) });
  writeCacerts(cacerts, chain);
  const server = ServerProcess.start(
    [
      '--configDir',
      DEMO,
      '--stateDir',
      path.join(dir, 'state'),
      '--meshConfig',
      path.join(dir, 'none'),
      ...LOOPBACK_LISTENER_ARGS,
    ],
    { ROOT_CA_DIR: cacerts },
  );
  try {
    const http = await server.port('http');
    await waitForStatus(`http://127.0.0.1:${http}/ready`, 200, 20_000);
    const ended = await waitForStatus(`http://127.0.0.1:${http}/ready`, 503, CHAIN_LEFT_MS + 10_000);
    expect(await ended.text()).toMatch(/ca \(signing certificate has expired at \d{4}-/);
    const debug = (await (await fetch(`http://127.0.0.1:${http}/debug/ca`)).json()) as {
      issuable: { notAfter: string; cannotIssue: string | null };
    };
    expect(debug.issuable.cannotIssue).toMatch(/^signing certificate has expired at /);
    expect(new Date(debug.issuable.notAfter).getTime()).toBeLessThanOrEqual(now + CHAIN_LEFT_MS);
    // Said once, not once per check.
    expect(
      server.logs.filter((l) => l.msg === 'the CA can issue no certificate until its material is replaced'),
    ).toHaveLength(1);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
