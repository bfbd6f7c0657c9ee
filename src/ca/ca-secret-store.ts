// Where a self-signed root lives between restarts and is shared between replicas. Creation is
// "create only if absent, then read back the winner", so replicas starting together converge on
// one root. Local mode keeps the files in --stateDir; Kubernetes mode keeps Secret istio-ca-secret.

import * as fs from 'node:fs';
import * as path from 'node:path';

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

/** Private keys are readable by the owner only. */
export const KEY_FILE_MODE = 0o600;

export class LocalCaSecretStore implements CaSecretStore {
  private readonly certFile: string;
  private readonly keyFile: string;

  constructor(private readonly stateDir: string) {
    this.certFile = path.join(stateDir, 'ca-cert.pem');
    this.keyFile = path.join(stateDir, 'ca-key.pem');
  }

  describe(): string {
    return `files ${this.certFile} and ${this.keyFile}`;
  }

  async get(): Promise<CaSecretData | undefined> {
    const [cert, key] = await Promise.all([readOrUndefined(this.certFile), readOrUndefined(this.keyFile)]);
    if (cert === undefined && key === undefined) return undefined;
    if (cert === undefined || key === undefined) {
      throw new Error(`${this.stateDir} holds only one of ca-cert.pem and ca-key.pem; remove it or restore the other`);
    }
    return { caCertPem: cert, caKeyPem: key };
  }

  async createIfAbsent(data: CaSecretData): Promise<CaSecretData> {
    await fs.promises.mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    // The key file is the lock: whoever creates it exclusively writes the certificate too.
    try {
      await fs.promises.writeFile(this.keyFile, data.caKeyPem, { flag: 'wx', mode: KEY_FILE_MODE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const existing = await this.get();
      if (!existing) throw new Error(`${this.keyFile} exists but cannot be read back`);
      return existing;
    }
    await fs.promises.writeFile(this.certFile, data.caCertPem, { mode: 0o644 });
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
