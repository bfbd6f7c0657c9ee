// Chains checked by the openssl binary, not by our own X.509 code: the leaf verifies through the
// chain's intermediates to the root, and its URI SAN is the identity it was issued for.

import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';

export function verifyChain(
  dir: string,
  name: string,
  pems: readonly string[],
  rootFile: string,
  identity: string,
): Promise<void> {
  const [leaf, ...intermediates] = pems;
  if (!leaf) throw new Error(`${identity}: empty chain`);
  const leafFile = path.join(dir, `${name}-leaf.pem`);
  writeFileSync(leafFile, leaf);
  const args = ['verify', '-CAfile', rootFile];
  if (intermediates.length > 0) {
    const chainFile = path.join(dir, `${name}-chain.pem`);
    writeFileSync(chainFile, intermediates.join(''));
    args.push('-untrusted', chainFile);
  }
  args.push(leafFile);
  let out: string;
  try {
    out = execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`${identity}: openssl verify failed: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  }
  if (!out.trim().endsWith(': OK')) throw new Error(`${identity}: openssl verify said ${out.trim()}`);
  const san = execFileSync('openssl', ['x509', '-in', leafFile, '-noout', '-ext', 'subjectAltName'], {
    encoding: 'utf8',
  });
  if (!san.includes(`URI:${identity}`)) throw new Error(`${identity}: the leaf's SAN is ${san.trim()}`);
  return Promise.resolve();
}

/** What openssl s_client negotiates with a TLS listener offering h2: protocol version, ALPN, verification. */
export function probeTls(
  port: number,
  serverName: string,
  rootFile: string,
): { protocol: string; alpn: string; verify: string } {
  const r = spawnSync(
    'openssl',
    [
      's_client',
      '-connect',
      `127.0.0.1:${port}`,
      '-servername',
      serverName,
      '-alpn',
      'h2',
      '-CAfile',
      rootFile,
      '-verify_hostname',
      serverName,
    ],
    { input: '', encoding: 'utf8', timeout: 10_000 },
  );
  const text = `${r.stdout}\n${r.stderr}`;
  const field = (re: RegExp) => re.exec(text)?.[1]?.trim() ?? '';
  return {
    protocol: field(/New, (TLSv[\d.]+), Cipher/),
    alpn: field(/ALPN protocol:\s*(\S+)/),
    verify: field(/Verify return code:\s*(.+)/),
  };
}
