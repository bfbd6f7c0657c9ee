// The local CA secret store: the root's key and certificate appear as a pair or not at all.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { CA_CERT_FILE, CA_KEY_FILE, CA_ROTATION_FILE, LocalCaSecretStore } from '../../../src/ca/roots/ca-secret-store';
import { PRIVATE_FILE_MODE, PUBLIC_FILE_MODE } from '../../../src/config/atomic-file';
import { tempDir } from '../../support/ca/fixtures';

const DATA = { caCertPem: 'CERT\n', caKeyPem: 'KEY\n' };

describe('LocalCaSecretStore', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir('istiod-ts-secret-store-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a new root is stored as a 0600 key and a 0644 certificate, with no temporary files', async () => {
    const store = new LocalCaSecretStore(dir);
    await expect(store.createIfAbsent(DATA)).resolves.toEqual(DATA);
    expect(fs.readdirSync(dir).sort()).toEqual([CA_CERT_FILE, CA_KEY_FILE]);
    expect(fs.statSync(path.join(dir, CA_KEY_FILE)).mode & 0o777).toBe(PRIVATE_FILE_MODE);
    expect(fs.statSync(path.join(dir, CA_CERT_FILE)).mode & 0o777).toBe(PUBLIC_FILE_MODE);
    await expect(store.get()).resolves.toEqual(DATA);
  });

  test('a crash between the rotation file and its mirrors is repaired: the mirrors are rewritten from it', async () => {
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent(DATA);
    const next = { caCertPem: 'NEW CERT\n', caKeyPem: 'NEW KEY\n', rotation: { phase: 'steady' as const, since: 1 } };
    await store.update(() => next);
    // The crash: the rotation file holds the new pair, the mirrors still the old one.
    fs.writeFileSync(path.join(dir, CA_KEY_FILE), DATA.caKeyPem, { mode: PRIVATE_FILE_MODE });
    fs.writeFileSync(path.join(dir, CA_CERT_FILE), DATA.caCertPem);
    await expect(store.repairMirrors()).resolves.toEqual([path.join(dir, CA_KEY_FILE), path.join(dir, CA_CERT_FILE)]);
    expect(fs.readFileSync(path.join(dir, CA_KEY_FILE), 'utf8')).toBe('NEW KEY\n');
    expect(fs.readFileSync(path.join(dir, CA_CERT_FILE), 'utf8')).toBe('NEW CERT\n');
    expect(fs.statSync(path.join(dir, CA_KEY_FILE)).mode & 0o777).toBe(PRIVATE_FILE_MODE);
    // The rollback runbook (delete the rotation file) now finds the pair that signs, not a stale one.
    fs.rmSync(path.join(dir, CA_ROTATION_FILE));
    await expect(store.get()).resolves.toEqual({ caCertPem: 'NEW CERT\n', caKeyPem: 'NEW KEY\n' });
    // Nothing to repair the next time.
    await expect(store.repairMirrors()).resolves.toEqual([]);
  });

  test('a second creator gets the stored root, not its own', async () => {
    const store = new LocalCaSecretStore(dir);
    await store.createIfAbsent(DATA);
    await expect(store.createIfAbsent({ caCertPem: 'OTHER CERT\n', caKeyPem: 'OTHER KEY\n' })).resolves.toEqual(DATA);
  });

  test('a certificate that cannot be written takes its key back out: no half pair is left', async () => {
    // Something in the way of the certificate's name makes its write fail after the key is in place.
    fs.mkdirSync(path.join(dir, CA_CERT_FILE));
    fs.writeFileSync(path.join(dir, CA_CERT_FILE, 'keep'), 'x');
    const store = new LocalCaSecretStore(dir);
    await expect(store.createIfAbsent(DATA)).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual([CA_CERT_FILE]);
  });

  test('a key without its certificate is an error naming both files and what to do', async () => {
    fs.writeFileSync(path.join(dir, CA_KEY_FILE), 'KEY\n');
    await expect(new LocalCaSecretStore(dir).get()).rejects.toThrow(
      `${path.join(dir, CA_KEY_FILE)} has no certificate beside it: restore ${path.join(dir, CA_CERT_FILE)} from a backup, or delete ca-key.pem to create a new root`,
    );
  });
});
