// istiod's serving certificate near and past the end of a plugged-in CA chain: a renewal that
// cannot produce a certificate valid into the future backs off and is counted, instead of running
// again at once (a busy loop that made a key and a log line per round, about 110 a second).

import * as fs from 'node:fs';
import { CertificateAuthority } from '../../../src/ca/signing/authority';
import { loadPluggedInCa } from '../../../src/ca/roots/plugged-in';
import { MIN_RENEW_INTERVAL_MS, ServingCertRotator } from '../../../src/ca/serving-cert/serving-cert-issuer';
import type { ServingCertificate } from '../../../src/contract/serving-cert';
import { tempDir } from '../../support/ca/fixtures';
import { opensslChain, writeCacerts } from '../../support/ca/openssl-ca';

test('renewals back off once the CA chain ends in less than MIN_RENEW_INTERVAL_MS, and past its end', async () => {
  const dir = tempDir('istiod-ts-renewal-');
  // The intermediate ends three seconds from now; the serving certificate cannot outlive it.
  const now = Date.now();
  const chain = opensslChain({ notBefore: new Date(now - 86_400_000), notAfter: new Date(now + 3000) });
  writeCacerts(dir, chain);
  const issued: ServingCertificate[] = [];
  const limited: string[] = [];
  const rotator = new ServingCertRotator(
    new CertificateAuthority(loadPluggedInCa(dir)!),
    { set: (c: ServingCertificate) => issued.push(c) } as never,
    () => [{ dns: 'istiod.istio-system.svc' }],
    () => 3600_000,
    (reason) => limited.push(reason),
  );
  try {
    await rotator.start();
    // Past the chain's end (3 s) and well inside the back-off (MIN_RENEW_INTERVAL_MS).
    expect(MIN_RENEW_INTERVAL_MS).toBeGreaterThan(10_000);
    await new Promise((r) => setTimeout(r, 5000));
    expect(issued).toHaveLength(1);
    expect(limited).toHaveLength(1);
    expect(limited[0]).toMatch(/^the CA chain ends at /);
  } finally {
    rotator.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
