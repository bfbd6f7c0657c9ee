// CSRs as ztunnel and istio-agent make them (ECDSA P-256 and P-384, RSA 2048), mutated by TLV and
// fed to the CA's strict reader (src/ca/signing/csr.ts): DER directly, or wrapped in PEM (sometimes
// broken PEM). A CsrError is a clean refusal; anything else thrown is a crash. Every 16th CSR the
// reader accepts also goes through signature verification on the CA's worker pool.

import 'reflect-metadata';
import * as crypto from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { CsrError, parseCsr, parseCsrDer, verifyCsrSignature } from '../../src/ca/signing/csr';
import { mutateDer } from './mutate-der';
import { mutateText } from './mutate-json';
import type { Rng } from './prng';
import { CaseRecord, count, FuzzTarget, Verdict } from './target';

x509.cryptoProvider.set(crypto.webcrypto as never);

/** One accepted CSR in this many also has its signature verified (a worker round trip). */
const VERIFY_EVERY = 16;

export async function makeCsr(key: 'P-256' | 'P-384' | 'RSA-2048'): Promise<Buffer> {
  const alg: webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams =
    key === 'RSA-2048'
      ? { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
      : { name: 'ECDSA', namedCurve: key };
  const keys = await crypto.webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    keys,
    signingAlgorithm:
      key === 'RSA-2048'
        ? alg
        : ({ name: 'ECDSA', hash: key === 'P-384' ? 'SHA-384' : 'SHA-256' } as webcrypto.EcdsaParams),
    extensions: [
      new x509.SubjectAlternativeNameExtension(
        [{ type: 'url', value: 'spiffe://cluster.local/ns/bookinfo/sa/reviews' }],
        true,
      ),
    ],
  });
  return Buffer.from(csr.rawData);
}

export const pem = (der: Buffer): string =>
  `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE REQUEST-----\n`;

export async function csrTarget(): Promise<FuzzTarget> {
  const seeds = [await makeCsr('P-256'), await makeCsr('P-384'), await makeCsr('RSA-2048')];
  const tally = new Map<string, number>();
  let accepted = 0;
  return {
    name: 'csr',
    describe:
      'CSR DER (ECDSA P-256/P-384, RSA 2048) mutated by TLV into parseCsrDer()/parseCsr() (src/ca/signing/csr.ts), every 16th accepted one verified',
    tally,
    async run(rng: Rng, record: CaseRecord): Promise<Verdict> {
      const der = rng.chance(0.97) ? mutateDer(rng, rng.pick(seeds)) : rng.pick(seeds);
      const asPem = rng.chance(0.25);
      let text = asPem ? pem(der) : '';
      if (asPem && rng.chance(0.3)) text = mutateText(rng, text);
      record.input = asPem ? JSON.stringify(text) : `DER base64: ${der.toString('base64')}`;
      try {
        const csr = asPem ? parseCsr(text) : parseCsrDer(der);
        if (++accepted % VERIFY_EVERY === 0) {
          await verifyCsrSignature(csr);
          count(tally, 'signature verified');
        }
        count(tally, `parsed: ${csr.keyDescription}`);
        return 'accepted';
      } catch (err) {
        if (!(err instanceof CsrError)) throw err;
        count(
          tally,
          `refused: ${err.message
            .replace(/\d+/g, 'N')
            .replace(/ [0-9.]{6,}/g, ' OID')
            .slice(0, 80)}`,
        );
        return 'refused';
      }
    },
    close: () => undefined,
  };
}
