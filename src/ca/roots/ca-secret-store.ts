// Where a self-signed root lives between restarts and is shared between replicas. Creation is
// "create only if absent, then read back the winner", so replicas starting together converge on
// one root. Local mode keeps the files in --stateDir; Kubernetes mode keeps Secret istio-ca-secret.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE, PUBLIC_FILE_MODE, removeFileDurably, writeFileAtomic } from '../../config/atomic-file';
import { parseRotationRecord, RotationRecord } from './root-rotation';

export interface CaSecretData {
  /** The root that signs now. */
  caCertPem: string;
  caKeyPem: string;
  /** Where a root rotation stands (root-rotation.ts); absent for a root never rotated. */
  rotation?: RotationRecord;
}

export interface CaSecretStore {
  /** The stored root, or undefined when none exists yet. */
  get(): Promise<CaSecretData | undefined>;
  /** Stores `data` unless a root already exists; returns whichever root is stored afterwards. */
  createIfAbsent(data: CaSecretData): Promise<CaSecretData>;
  /**
   * Read-modify-write of the stored root for a rotation step: `mutate` sees the freshest stored
   * data and returns undefined when nothing needs to change. Returns what is stored afterwards.
   */
  update(mutate: (current: CaSecretData) => CaSecretData | undefined): Promise<CaSecretData>;
  /** Where the root lives, for logs. */
  describe(): string;
}

export const CA_CERT_FILE = 'ca-cert.pem';
export const CA_KEY_FILE = 'ca-key.pem';
/**
 * Local mode's rotation state. It holds the signing pair as well, and is written before the two
 * files above, which mirror it: a crash between the writes leaves the newest state here, and a
 * restart repairs the mirrors. It holds a private key, so it is 0600 like ca-key.pem.
 */
export const CA_ROTATION_FILE = 'ca-root-rotation.json';

interface LocalRotationFile {
  signing: { certPem: string; keyPem: string };
  rotation: RotationRecord;
}

export class LocalCaSecretStore implements CaSecretStore {
  private readonly certFile: string;
  private readonly keyFile: string;
  private readonly rotationFile: string;

  constructor(stateDir: string) {
    this.certFile = path.join(stateDir, CA_CERT_FILE);
    this.keyFile = path.join(stateDir, CA_KEY_FILE);
    this.rotationFile = path.join(stateDir, CA_ROTATION_FILE);
  }

  describe(): string {
    return `files ${this.certFile} and ${this.keyFile}`;
  }

  async get(): Promise<CaSecretData | undefined> {
    const rotation = await readOrUndefined(this.rotationFile);
    if (rotation !== undefined) return this.decodeRotationFile(rotation);
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

  async update(mutate: (current: CaSecretData) => CaSecretData | undefined): Promise<CaSecretData> {
    // One process owns --stateDir, so a plain read-modify-write cannot race another writer.
    const current = await this.get();
    if (!current) throw new Error(`${this.describe()}: no root to update`);
    const next = mutate(current);
    if (!next) return current;
    const file: LocalRotationFile = {
      signing: { certPem: next.caCertPem, keyPem: next.caKeyPem },
      rotation: next.rotation ?? { phase: 'steady', since: Date.now() },
    };
    await writeFileAtomic(this.rotationFile, JSON.stringify(file, null, 2) + '\n', { mode: PRIVATE_FILE_MODE });
    await writeFileAtomic(this.keyFile, next.caKeyPem, { mode: PRIVATE_FILE_MODE });
    await writeFileAtomic(this.certFile, next.caCertPem, { mode: PUBLIC_FILE_MODE });
    return { ...next, rotation: file.rotation };
  }

  /**
   * Brings ca-cert.pem and ca-key.pem back in line with the rotation file, which is written first:
   * a crash between the writes left them holding the previous pair, and the rollback runbook
   * (delete the rotation file) would then bring back a stale root. Returns the files it rewrote.
   */
  async repairMirrors(): Promise<string[]> {
    const rotation = await readOrUndefined(this.rotationFile);
    if (rotation === undefined) return [];
    const { caCertPem, caKeyPem } = this.decodeRotationFile(rotation);
    const repaired: string[] = [];
    if ((await readOrUndefined(this.keyFile)) !== caKeyPem) {
      await writeFileAtomic(this.keyFile, caKeyPem, { mode: PRIVATE_FILE_MODE });
      repaired.push(this.keyFile);
    }
    if ((await readOrUndefined(this.certFile)) !== caCertPem) {
      await writeFileAtomic(this.certFile, caCertPem, { mode: PUBLIC_FILE_MODE });
      repaired.push(this.certFile);
    }
    return repaired;
  }

  private decodeRotationFile(text: string): CaSecretData {
    let parsed: Partial<LocalRotationFile>;
    try {
      parsed = JSON.parse(text) as Partial<LocalRotationFile>;
    } catch (err) {
      throw new Error(`${this.rotationFile}: not JSON: ${(err as Error).message}`);
    }
    const signing = parsed.signing;
    if (typeof signing?.certPem !== 'string' || typeof signing.keyPem !== 'string')
      throw new Error(`${this.rotationFile}: signing.certPem and signing.keyPem are required`);
    const rotation = parseRotationRecord(JSON.stringify(parsed.rotation ?? null), `${this.rotationFile} rotation`);
    return { caCertPem: signing.certPem, caKeyPem: signing.keyPem, rotation };
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
