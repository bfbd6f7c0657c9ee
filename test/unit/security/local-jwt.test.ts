import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LOCAL_TOKEN_CACHE_MAX_ENTRIES, LocalTokenVerifier } from '../../../src/security/authenticator';
import {
  MAX_TOKEN_BYTES,
  TOKEN_KEY_FILE,
  loadOrCreateTokenKey,
  signLocalToken,
  verifyLocalToken,
} from '../../../src/security/local-jwt';
import { MAX_SPIFFE_ID_LENGTH, parseSpiffeId, parseServiceAccountUsername } from '../../../src/security/spiffe';
import { tempDir } from '../../support/ca/fixtures';

const subject = {
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  podName: 'ztunnel-a',
  podUid: 'uid-1',
  nodeName: 'node-a',
};

describe('local service-account tokens', () => {
  const key = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const pub = crypto.createPublicKey(key);

  test('a token carries the projected-token claims the server reads back', () => {
    const token = signLocalToken(key, subject, ['istio-ca'], 600);
    expect(verifyLocalToken(pub, token, ['istio-ca'])).toMatchObject({ ...subject, audiences: ['istio-ca'] });
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      sub: string;
      'kubernetes.io': { pod: unknown };
    };
    expect(claims.sub).toBe('system:serviceaccount:istio-system:ztunnel');
    expect(claims['kubernetes.io'].pod).toEqual({ name: 'ztunnel-a', uid: 'uid-1' });
  });

  test.each([
    ['an expired token', () => signLocalToken(key, subject, ['istio-ca'], 10, Date.now() - 3600_000), 'expired_token'],
    ['a token for another audience', () => signLocalToken(key, subject, ['other'], 600), 'wrong_audience'],
    [
      'a token signed by another key',
      () =>
        signLocalToken(
          crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey,
          subject,
          ['istio-ca'],
          600,
        ),
      'invalid_token',
    ],
    ['a token that is not a JWT', () => 'abc', 'malformed_token'],
    [`a token above ${MAX_TOKEN_BYTES} bytes`, () => 'a'.repeat(MAX_TOKEN_BYTES + 1), 'malformed_token'],
  ])('%s is refused', (_name, make, reason) => {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- @types/jest types asymmetric matchers as any; toThrow matches the thrown error against it
    expect(() => verifyLocalToken(pub, make(), ['istio-ca'])).toThrow(expect.objectContaining({ reason }));
  });

  test('the token key is created once with mode 0600 and reused', () => {
    const dir = tempDir();
    const a = loadOrCreateTokenKey(dir);
    const b = loadOrCreateTokenKey(dir);
    expect(a.export({ format: 'pem', type: 'pkcs8' })).toBe(b.export({ format: 'pem', type: 'pkcs8' }));
    expect(fs.statSync(path.join(dir, TOKEN_KEY_FILE)).mode & 0o777).toBe(0o600);
  });

  test(`verified tokens are cached, at most ${LOCAL_TOKEN_CACHE_MAX_ENTRIES}, and not past their expiry`, async () => {
    let now = Date.now();
    const v = new LocalTokenVerifier(
      pub,
      () => ['istio-ca'],
      () => now,
    );
    const token = signLocalToken(key, subject, ['istio-ca'], 30, now);
    await expect(v.verify(token)).resolves.toMatchObject({ podUid: 'uid-1' });
    now += 120_000;
    await expect(v.verify(token)).rejects.toMatchObject({ reason: 'expired_token' });
  });
});

describe('SPIFFE identities', () => {
  test('a service-account id parses into trust domain, namespace and service account', () => {
    expect(parseSpiffeId('spiffe://cluster.local/ns/default/sa/sleep')).toEqual({
      trustDomain: 'cluster.local',
      namespace: 'default',
      serviceAccount: 'sleep',
    });
  });

  test.each([
    'default/sleep',
    'spiffe://td/ns/default',
    'spiffe://td/ns/default/sa/sleep/extra',
    'spiffe://td/ns//sa/x',
    'spiffe://td/ns/a b/sa/x',
    'http://td/ns/a/sa/b',
  ])('"%s" is not a service-account SPIFFE id', (id) => {
    expect(() => parseSpiffeId(id)).toThrow();
  });

  test(`ids longer than ${MAX_SPIFFE_ID_LENGTH} characters are refused`, () => {
    expect(() => parseSpiffeId(`spiffe://td/ns/a/sa/${'x'.repeat(MAX_SPIFFE_ID_LENGTH)}`)).toThrow(/longer than/);
  });

  test('only system:serviceaccount usernames are service accounts', () => {
    expect(parseServiceAccountUsername('system:serviceaccount:ns:sa')).toEqual({
      namespace: 'ns',
      serviceAccount: 'sa',
    });
    expect(parseServiceAccountUsername('system:node:n1')).toBeUndefined();
  });
});
