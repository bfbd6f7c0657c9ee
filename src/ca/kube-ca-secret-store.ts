// The self-signed root in Kubernetes: Secret istio-ca-secret (type istio.io/ca-root) in istiod's
// namespace, with istiod's key layout so either control plane can read the other's root.
// Reads and the create-if-absent race go through the one write path (KubeWriter).

import type { KubeObject } from '../store/types';
import type { CaSecretData, CaSecretStore } from './ca-secret-store';

export const CA_SECRET_NAME = 'istio-ca-secret';
export const CA_SECRET_TYPE = 'istio.io/ca-root';

/** What the store needs from the API server; KubeWriter provides it. */
export interface CaSecretApi {
  getSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Creates unless it exists; either way the Secret that won. */
  createSecretIfAbsent(secret: KubeObject): Promise<{ secret: KubeObject; created: boolean }>;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

export class KubeCaSecretStore implements CaSecretStore {
  constructor(
    private readonly api: CaSecretApi,
    private readonly namespace: string,
  ) {}

  describe(): string {
    return `Secret ${this.namespace}/${CA_SECRET_NAME}`;
  }

  async get(): Promise<CaSecretData | undefined> {
    let secret: KubeObject | undefined;
    try {
      secret = await this.api.getSecret(this.namespace, CA_SECRET_NAME);
    } catch (err) {
      throw new Error(`reading ${this.describe()} failed: ${(err as Error).message}`);
    }
    return secret === undefined ? undefined : this.decode(secret);
  }

  private decode(secret: KubeObject): CaSecretData {
    const caCertPem = unb64(secret.data?.['ca-cert.pem']);
    const caKeyPem = unb64(secret.data?.['ca-key.pem']);
    if (!caCertPem || !caKeyPem) throw new Error(`${this.describe()} lacks ca-cert.pem or ca-key.pem`);
    return { caCertPem, caKeyPem };
  }

  async createIfAbsent(data: CaSecretData): Promise<CaSecretData> {
    const body: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: CA_SECRET_NAME, namespace: this.namespace },
      type: CA_SECRET_TYPE,
      data: {
        'ca-cert.pem': b64(data.caCertPem),
        'ca-key.pem': b64(data.caKeyPem),
        'root-cert.pem': b64(data.caCertPem),
        'cert-chain.pem': '',
        'key.pem': '',
      },
    };
    let outcome: { secret: KubeObject; created: boolean };
    try {
      outcome = await this.api.createSecretIfAbsent(body);
    } catch (err) {
      throw new Error(`creating ${this.describe()} failed: ${(err as Error).message}`);
    }
    // Not created: another replica won the race; its root is the one everybody uses.
    return outcome.created ? data : this.decode(outcome.secret);
  }
}
