import * as crypto from 'node:crypto';
import {
  CsrError,
  MAX_CSR_PEM_BYTES,
  MAX_RSA_KEY_BITS,
  csrDerFromPem,
  parseCsrDer,
  readCsr,
} from '../../../src/ca/signing/csr';
import {
  MAX_DER_DEPTH,
  MAX_DER_ELEMENTS,
  TAG,
  checkWellFormed,
  encodeOid,
  readTlv,
  tlv,
} from '../../../src/ca/signing/der';
import { toPem } from '../../../src/ca/signing/leaf-signer';
import { makeCsr, opensslCsr } from '../../support/ca/fixtures';

async function reason(pem: string): Promise<string> {
  try {
    await readCsr(pem);
  } catch (err) {
    expect(err).toBeInstanceOf(CsrError);
    return (err as Error).message;
  }
  throw new Error('CSR was accepted');
}

describe('CSR acceptance', () => {
  test.each(['P-256', 'P-384', 'RSA-2048'] as const)('a %s CSR with a valid signature is accepted', async (key) => {
    const csr = await readCsr((await makeCsr(undefined, key)).pem);
    expect(csr.keyDescription).toBe(key === 'RSA-2048' ? 'RSA 2048' : `ECDSA ${key}`);
    const fromKey = crypto
      .createPublicKey(crypto.createPrivateKey((await makeCsr(undefined, key)).keyPem))
      .export({ format: 'der', type: 'spki' });
    expect(fromKey[0]).toBe(csr.spki[0]);
  });

  test('the SubjectPublicKeyInfo is taken verbatim from the CSR', async () => {
    const made = await makeCsr();
    const csr = await readCsr(made.pem);
    const expected = crypto
      .createPublicKey(crypto.createPrivateKey(made.keyPem))
      .export({ format: 'der', type: 'spki' });
    expect(csr.spki.equals(expected)).toBe(true);
  });

  test.each(['P-256', 'P-384', 'RSA-2048'] as const)(
    'the %s key handed to the verifier as a JWK is the key of the SubjectPublicKeyInfo',
    async (key) => {
      const csr = await readCsr((await makeCsr(undefined, key)).pem);
      expect(csr.jwk).toEqual(
        crypto.createPublicKey({ key: csr.spki, format: 'der', type: 'spki' }).export({ format: 'jwk' }),
      );
    },
  );

  test('a CSR with a compressed EC point has no JWK form and is verified from its DER key', async () => {
    // Built by hand: openssl and WebCrypto both write uncompressed points into CSRs.
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const point = publicKey.export({ format: 'der', type: 'spki' }).subarray(-65);
    const compressed = Buffer.concat([Buffer.from([0x02 | (point[64]! & 1)]), point.subarray(1, 33)]);
    const spki = tlv(
      TAG.SEQUENCE,
      tlv(TAG.SEQUENCE, encodeOid('1.2.840.10045.2.1'), encodeOid('1.2.840.10045.3.1.7')),
      tlv(TAG.BIT_STRING, Buffer.from([0]), compressed),
    );
    const info = tlv(TAG.SEQUENCE, Buffer.from([TAG.INTEGER, 1, 0]), tlv(TAG.SEQUENCE), spki, tlv(0xa0));
    const signature = crypto.sign('sha256', info, privateKey);
    const der = tlv(
      TAG.SEQUENCE,
      info,
      tlv(TAG.SEQUENCE, encodeOid('1.2.840.10045.4.3.2')),
      tlv(TAG.BIT_STRING, Buffer.from([0]), signature),
    );
    const csr = await readCsr(toPem(der, 'CERTIFICATE REQUEST'));
    expect(csr.jwk).toBeUndefined();
    expect(csr.spki.equals(spki)).toBe(true);
    // The same CSR with a flipped signature bit still fails on the DER path.
    const bad = Buffer.from(der);
    bad[bad.length - 1]! ^= 1;
    await expect(readCsr(toPem(bad, 'CERTIFICATE REQUEST'))).rejects.toThrow('CSR signature does not verify');
  });

  test('an openssl-made CSR with the "NEW CERTIFICATE REQUEST" label is accepted', async () => {
    const key = crypto
      .generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const pem = opensslCsr(key, '-addext', 'subjectAltName=critical,URI:spiffe://x/ns/a/sa/b');
    await expect(readCsr(pem.replace(/CERTIFICATE REQUEST/g, 'NEW CERTIFICATE REQUEST'))).resolves.toBeDefined();
  });
});

describe('CSR rejection names the problem', () => {
  test('an empty CSR is rejected', async () => {
    expect(await reason('')).toBe('CSR is empty');
  });

  test('garbage is rejected as not PEM', async () => {
    expect(await reason('hello world')).toMatch(/not PEM/);
  });

  test(`a CSR larger than ${MAX_CSR_PEM_BYTES} bytes is rejected before parsing`, async () => {
    const pem = (await makeCsr()).pem;
    expect(await reason(pem + ' '.repeat(MAX_CSR_PEM_BYTES))).toMatch(/larger than 65536 bytes/);
  });

  test('two CSRs in one PEM are rejected', async () => {
    const pem = (await makeCsr()).pem + (await makeCsr()).pem;
    expect(await reason(pem)).toMatch(/holds 2 blocks; exactly one is allowed/);
  });

  test('a certificate instead of a CSR is rejected', async () => {
    expect(await reason(toPem(Buffer.from([0x30, 0]), 'CERTIFICATE'))).toMatch(/not a CERTIFICATE REQUEST/);
  });

  test('a CSR whose signature does not verify is rejected', async () => {
    const der = csrDerFromPem((await makeCsr()).pem);
    der[der.length - 5]! ^= 0x01; // flips a bit inside the signature value
    expect(await reason(toPem(der, 'CERTIFICATE REQUEST'))).toBe('CSR signature does not verify');
  });

  test('a CSR signed by another key than the one it carries is rejected', async () => {
    const a = csrDerFromPem((await makeCsr()).pem);
    const b = csrDerFromPem((await makeCsr()).pem);
    const pa = parseCsrDer(a);
    const pb = parseCsrDer(b);
    const swapped = Buffer.concat([
      a.subarray(0, a.indexOf(pa.spki)),
      pb.spki,
      a.subarray(a.indexOf(pa.spki) + pa.spki.length),
    ]);
    expect(await reason(toPem(swapped, 'CERTIFICATE REQUEST'))).toBe('CSR signature does not verify');
  });

  test('an RSA key below 2048 bits is rejected', async () => {
    expect(await reason((await makeCsr(undefined, 'RSA-1024')).pem)).toBe(
      'RSA key of 1024 bits is too small (at least 2048)',
    );
  });

  test(`an RSA key above ${MAX_RSA_KEY_BITS} bits is rejected`, async () => {
    // Generating such a key takes seconds, and the size is checked before the signature, so a
    // CSR around a synthetic modulus is enough.
    const modulus = Buffer.concat([Buffer.from([0, 0xc1]), crypto.randomBytes((MAX_RSA_KEY_BITS + 1024) / 8 - 1)]);
    const rsaKey = tlv(TAG.SEQUENCE, tlv(TAG.INTEGER, modulus), tlv(TAG.INTEGER, Buffer.from([1, 0, 1])));
    const spki = tlv(
      TAG.SEQUENCE,
      tlv(TAG.SEQUENCE, encodeOid('1.2.840.113549.1.1.1'), Buffer.from([TAG.NULL, 0])),
      tlv(TAG.BIT_STRING, Buffer.from([0]), rsaKey),
    );
    const info = tlv(
      TAG.SEQUENCE,
      Buffer.from([TAG.INTEGER, 1, 0]),
      Buffer.from([0x30, 0]),
      spki,
      Buffer.from([0xa0, 0]),
    );
    const der = tlv(
      TAG.SEQUENCE,
      info,
      tlv(TAG.SEQUENCE, encodeOid('1.2.840.113549.1.1.11'), Buffer.from([TAG.NULL, 0])),
      tlv(TAG.BIT_STRING, Buffer.alloc(257)),
    );
    const pem = toPem(der, 'CERTIFICATE REQUEST');
    expect(await reason(pem)).toBe(
      `RSA key of ${MAX_RSA_KEY_BITS + 1024} bits is too large (at most ${MAX_RSA_KEY_BITS})`,
    );
  });

  test('an Ed25519 key is an unsupported key algorithm', async () => {
    const key = crypto.generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });
    const pem = opensslCsr(key as string);
    expect(await reason(pem)).toMatch(/unsupported public key algorithm 1\.3\.101\.112/);
  });

  test('a secp256k1 key is an unsupported curve', async () => {
    const key = crypto
      .generateKeyPairSync('ec', { namedCurve: 'secp256k1' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' });
    const pem = opensslCsr(key as string);
    expect(await reason(pem)).toMatch(/unsupported EC curve 1\.3\.132\.0\.10/);
  });

  test('an EC point that is not on the curve is refused as an unreadable key', async () => {
    const der = csrDerFromPem((await makeCsr()).pem);
    const spki = parseCsrDer(der).spki;
    const at = der.indexOf(spki) + spki.length - 10; // inside the point's Y coordinate
    der[at]! ^= 0xff;
    expect(await reason(toPem(der, 'CERTIFICATE REQUEST'))).toMatch(
      /CSR public key cannot be read|CSR signature does not verify/,
    );
  });

  test('an EC point of the wrong size is refused before any crypto', async () => {
    const point = Buffer.concat([Buffer.from([4]), crypto.randomBytes(63)]);
    const spki = tlv(
      TAG.SEQUENCE,
      tlv(TAG.SEQUENCE, encodeOid('1.2.840.10045.2.1'), encodeOid('1.2.840.10045.3.1.7')),
      tlv(TAG.BIT_STRING, Buffer.from([0]), point),
    );
    const info = tlv(
      TAG.SEQUENCE,
      Buffer.from([TAG.INTEGER, 1, 0]),
      Buffer.from([0x30, 0]),
      spki,
      Buffer.from([0xa0, 0]),
    );
    const der = tlv(
      TAG.SEQUENCE,
      info,
      tlv(TAG.SEQUENCE, encodeOid('1.2.840.10045.4.3.2')),
      tlv(TAG.BIT_STRING, Buffer.alloc(71)),
    );
    expect(await reason(toPem(der, 'CERTIFICATE REQUEST'))).toBe('EC P-256 public key has 64 bytes');
  });

  test('trailing bytes after the CSR are rejected', async () => {
    const der = Buffer.concat([csrDerFromPem((await makeCsr()).pem), Buffer.from([0])]);
    expect(await reason(toPem(der, 'CERTIFICATE REQUEST'))).toMatch(/trailing bytes/);
  });

  test('invalid base64 inside the PEM block is rejected', async () => {
    expect(await reason('-----BEGIN CERTIFICATE REQUEST-----\nabc\n-----END CERTIFICATE REQUEST-----\n')).toMatch(
      /not valid base64/,
    );
  });
});

describe('DER bounds', () => {
  test(`nesting deeper than ${MAX_DER_DEPTH} levels is refused`, () => {
    let inner: Buffer = Buffer.from([TAG.NULL, 0]);
    for (let i = 0; i <= MAX_DER_DEPTH; i++) inner = tlv(TAG.SEQUENCE, inner);
    expect(() => checkWellFormed(inner, readTlv(inner, 0))).toThrow(`nesting deeper than ${MAX_DER_DEPTH}`);
  });

  test(`more than ${MAX_DER_ELEMENTS} elements are refused`, () => {
    const many = tlv(TAG.SEQUENCE, Buffer.alloc((MAX_DER_ELEMENTS + 1) * 2, Buffer.from([TAG.NULL, 0])));
    expect(() => checkWellFormed(many, readTlv(many, 0))).toThrow(/elements/);
  });

  test('indefinite and non-minimal lengths are refused', () => {
    expect(() => readTlv(Buffer.from([0x30, 0x80, 0, 0]), 0)).toThrow('indefinite length');
    expect(() => readTlv(Buffer.from([0x04, 0x81, 0x05, 1, 2, 3, 4, 5]), 0)).toThrow('non-minimal length');
  });
});

// Random mutations of a valid CSR must never crash the parser nor hang it: every outcome is either
// a clean acceptance (a mutation in an ignored field whose signature still verifies is impossible,
// so in practice a CsrError) or a CsrError with a message.
describe('fuzzing the CSR reader', () => {
  const ITERATIONS = 3000;

  test(`${ITERATIONS} random mutations of a valid CSR end in a CsrError or a verified CSR, never another error`, async () => {
    const base = csrDerFromPem((await makeCsr()).pem);
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const outcomes = { rejected: 0, accepted: 0 };
    for (let i = 0; i < ITERATIONS; i++) {
      const der = Buffer.from(base);
      let mutated: Buffer = der;
      switch (rand(4)) {
        case 0:
          for (let k = 0, n = 1 + rand(4); k < n; k++) der[rand(der.length)] = rand(256);
          break;
        case 1:
          mutated = der.subarray(0, rand(der.length));
          break;
        case 2: {
          const at = rand(der.length);
          mutated = Buffer.concat([der.subarray(0, at), crypto.randomBytes(1 + rand(8)), der.subarray(at)]);
          break;
        }
        default: {
          const at = rand(der.length);
          mutated = Buffer.concat([der.subarray(0, at), der.subarray(at + 1 + rand(8))]);
        }
      }
      try {
        await readCsr(toPem(mutated, 'CERTIFICATE REQUEST'));
        outcomes.accepted++;
      } catch (err) {
        if (!(err instanceof CsrError)) throw new Error(`mutation ${i} raised ${String(err)}`);
        expect(err.message.length).toBeGreaterThan(0);
        outcomes.rejected++;
      }
    }
    expect(outcomes.rejected + outcomes.accepted).toBe(ITERATIONS);
    expect(outcomes.rejected).toBeGreaterThan(ITERATIONS * 0.9);
  });
});
