// The self-signed root in Kubernetes: Secret istio-ca-secret (type istio.io/ca-root) in istiod's
// namespace, with istiod's key layout so either control plane can read the other's root.

import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import type { CaSecretData, CaSecretStore } from './ca-secret-store';

export const CA_SECRET_NAME = 'istio-ca-secret';
export const CA_SECRET_TYPE = 'istio.io/ca-root';

type SecretApi = Pick<CoreV1Api, 'readNamespacedSecret' | 'createNamespacedSecret'>;

/** HTTP status of a client-node ApiException (or undefined for other errors). */
export function httpStatusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

export class KubeCaSecretStore implements CaSecretStore {
  constructor(
    private readonly api: SecretApi,
    private readonly namespace: string,
  ) {}

  describe(): string {
    return `Secret ${this.namespace}/${CA_SECRET_NAME}`;
  }

  async get(): Promise<CaSecretData | undefined> {
    let secret: V1Secret;
    try {
      secret = await this.api.readNamespacedSecret({ name: CA_SECRET_NAME, namespace: this.namespace });
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw new Error(`reading ${this.describe()} failed: ${(err as Error).message}`);
    }
    const caCertPem = unb64(secret.data?.['ca-cert.pem']);
    const caKeyPem = unb64(secret.data?.['ca-key.pem']);
    if (!caCertPem || !caKeyPem) throw new Error(`${this.describe()} lacks ca-cert.pem or ca-key.pem`);
    return { caCertPem, caKeyPem };
  }

  async createIfAbsent(data: CaSecretData): Promise<CaSecretData> {
    const body: V1Secret = {
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
    try {
      await this.api.createNamespacedSecret({ namespace: this.namespace, body });
      return data;
    } catch (err) {
      // 409: another replica won the race; its root is the one everybody uses.
      if (httpStatusOf(err) !== 409) throw new Error(`creating ${this.describe()} failed: ${(err as Error).message}`);
    }
    const winner = await this.get();
    if (!winner) throw new Error(`${this.describe()} was reported as existing but cannot be read`);
    return winner;
  }
}
