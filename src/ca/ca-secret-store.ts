// Where a self-signed root lives between restarts and is shared between replicas. Creation is
// "create only if absent, then read back the winner", so replicas starting together converge on
// one root. Local mode keeps the files in --stateDir; Kubernetes mode keeps Secret istio-ca-secret.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE, PUBLIC_FILE_MODE, removeFileDurably, writeFileAtomic } from '../config/atomic-file';

export interface CaSecretData {
  caCertPem: string;
  caKeyPem: string;
}

export interface CaSecretStore {
  /** The stored root, or undefined when none exists yet. */
  get(): Promise<CaSecretData | undefined>;
  /** Stores `data` unless a root already exists; returns whichever root is stored afterwards. */
  createIfAbsent(data: CaSecretData): Promise<CaSecretData>;
  /** Where the root lives, for logs. */
  describe(): string;
}

export const CA_CERT_FILE = 'ca-cert.pem';
export const CA_KEY_FILE = 'ca-key.pem';

export class LocalCaSecretStore implements CaSecretStore {
  private readonly certFile: string;
  private readonly keyFile: string;

  constructor(stateDir: string) {
    this.certFile = path.join(stateDir, CA_CERT_FILE);
    this.keyFile = path.join(stateDir, CA_KEY_FILE);
  }

  describe(): string {
    return `files ${this.certFile} and ${this.keyFile}`;
  }

  async get(): Promise<CaSecretData | undefined> {
    const [cert, key] = await Promise.all([readOrUndefined(this.certFile), readOrUndefined(this.keyFile)]);
    if (cert === undefined && key === undefined) return undefined;
    // Half a pair is never repaired by making a new root: workloads trust the old one, and the
    // missing half may only be misplaced. The operator decides.
    const consequence = 'to create a new root (every workload then needs a new certificate)';
    if (cert === undefined) {
      throw new Error(
        `${this.keyFile} has no certificate beside it: restore ${this.certFile} from a backup, or delete ${CA_KEY_FILE} ${consequence}`,
      );
    }
    if (key === undefined) {
      throw new Error(
        `${this.certFile} has no private key beside it: restore ${this.keyFile} from a backup, or delete ${CA_CERT_FILE} ${consequence}`,
      );
    }
    return { caCertPem: cert, caKeyPem: key };
  }

  async createIfAbsent(data: CaSecretData): Promise<CaSecretData> {
    // The key file is the lock: whoever links it in first writes the certificate too. Each file
    // appears whole or not at all (atomic-file.ts); a certificate that cannot be written takes
    // its key back out, so an error never leaves half a pair behind.
    try {
      await writeFileAtomic(this.keyFile, data.caKeyPem, { mode: PRIVATE_FILE_MODE, exclusive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const existing = await this.get();
      if (!existing) throw new Error(`${this.keyFile} exists but cannot be read back`);
      return existing;
    }
    try {
      await writeFileAtomic(this.certFile, data.caCertPem, { mode: PUBLIC_FILE_MODE });
    } catch (err) {
      await removeFileDurably(this.keyFile);
      throw err;
    }
    return data;
  }
}

async function readOrUndefined(file: string): Promise<string | undefined> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
