// The default CA: a self-signed root made once and shared through a CaSecretStore.

import { scopedLogger } from '../log/logger';
import { generateCaCertificate, CaKeyType } from './ca-cert-generator';
import type { CaSecretStore } from './ca-secret-store';
import { CaKeyMaterial, buildKeyMaterial } from './key-material';

const log = scopedLogger('ca');

export interface SelfSignedOptions {
  trustDomain: string;
  keyType: CaKeyType;
  rsaBits: number;
  ttlMs: number;
}

/** Loads the stored root, or generates one and stores it unless another replica was faster. */
export async function ensureSelfSignedCa(store: CaSecretStore, opts: SelfSignedOptions): Promise<CaKeyMaterial> {
  let data = await store.get();
  if (!data) {
    const generated = await generateCaCertificate({
      subject: `O=${opts.trustDomain}`,
      keyType: opts.keyType,
      rsaBits: opts.rsaBits,
      ttlMs: opts.ttlMs,
    });
    data = await store.createIfAbsent({ caCertPem: generated.certPem, caKeyPem: generated.keyPem });
    const won = data.caCertPem === generated.certPem;
    log.info(
      { where: store.describe(), created: won },
      won ? 'self-signed root created' : 'another replica created the root first; using it',
    );
  } else {
    log.info({ where: store.describe() }, 'self-signed root loaded');
  }
  try {
    return buildKeyMaterial(
      { caCertPem: data.caCertPem, caKeyPem: data.caKeyPem, certChainPem: '', rootCertPem: data.caCertPem },
      'self-signed',
    );
  } catch (err) {
    throw new Error(`self-signed root in ${store.describe()}: ${(err as Error).message}`);
  }
}
