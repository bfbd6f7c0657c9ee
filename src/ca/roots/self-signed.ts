// The default CA: a self-signed root made once and shared through a CaSecretStore.

import { scopedLogger } from '../../log/logger';
import { generateCaCertificate, CaKeyType } from '../signing/ca-cert-generator';
import type { CaSecretData, CaSecretStore } from './ca-secret-store';
import { CaKeyMaterial, buildKeyMaterial } from '../signing/key-material';
import type { RootPair } from './root-rotation';

const log = scopedLogger('ca');

export interface SelfSignedOptions {
  trustDomain: string;
  keyType: CaKeyType;
  rsaBits: number;
  ttlMs: number;
}

/** A new self-signed root: the first one, or the next one of a rotation. */
export async function generateRoot(opts: SelfSignedOptions): Promise<RootPair> {
  const generated = await generateCaCertificate({
    subject: `O=${opts.trustDomain}`,
    keyType: opts.keyType,
    rsaBits: opts.rsaBits,
    ttlMs: opts.ttlMs,
  });
  return { certPem: generated.certPem, keyPem: generated.keyPem };
}

/** Loads the stored root, or generates one and stores it unless another replica was faster. */
export async function ensureSelfSignedCa(store: CaSecretStore, opts: SelfSignedOptions): Promise<CaKeyMaterial> {
  return selfSignedMaterial(await ensureSelfSignedRoot(store, opts), store);
}

/** The stored root (with its rotation state), created first when there is none. */
export async function ensureSelfSignedRoot(store: CaSecretStore, opts: SelfSignedOptions): Promise<CaSecretData> {
  let data = await store.get();
  if (!data) {
    const generated = await generateRoot(opts);
    data = await store.createIfAbsent({ caCertPem: generated.certPem, caKeyPem: generated.keyPem });
    const won = data.caCertPem === generated.certPem;
    log.info(
      { where: store.describe(), created: won },
      won ? 'self-signed root created' : 'another replica created the root first; using it',
    );
  } else {
    log.info({ where: store.describe(), rotation: data.rotation?.phase ?? 'steady' }, 'self-signed root loaded');
  }
  return data;
}

/** Key material for a stored self-signed root; its own certificate is its only root. */
export function selfSignedMaterial(
  data: Pick<CaSecretData, 'caCertPem' | 'caKeyPem'>,
  store: CaSecretStore,
): CaKeyMaterial {
  try {
    return buildKeyMaterial(
      { caCertPem: data.caCertPem, caKeyPem: data.caKeyPem, certChainPem: '', rootCertPem: data.caCertPem },
      'self-signed',
    );
  } catch (err) {
    throw new Error(`self-signed root in ${store.describe()}: ${(err as Error).message}`);
  }
}
