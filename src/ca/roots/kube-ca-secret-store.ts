// The self-signed root in Kubernetes: Secret istio-ca-secret (type istio.io/ca-root) in istiod's
// namespace, with istiod's key layout so either control plane can read the other's root.
// Reads and the create-if-absent race go through the one write path (KubeWriter).

import type { KubeObject } from '../../store/types';
import type { ObjectRef } from '../../store/kube/writes';
import type { CaSecretData, CaSecretStore } from './ca-secret-store';
import { parseRotationRecord, trustedRoots } from './root-rotation';

export const CA_SECRET_NAME = 'istio-ca-secret';
export const CA_SECRET_TYPE = 'istio.io/ca-root';
/**
 * Where a rotation stands, beside istiod's keys (ca-cert.pem/ca-key.pem stay the signing pair and
 * root-cert.pem the whole bundle, so istiod reading this Secret still finds a working CA).
 */
export const CA_SECRET_ROTATION_KEY = 'root-rotation.json';

/** What the store needs from the API server; KubeWriter provides it. */
export interface CaSecretApi {
  getSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Creates unless it exists; either way the Secret that won. */
  createSecretIfAbsent(secret: KubeObject): Promise<{ secret: KubeObject; created: boolean }>;
  /** Read-modify-write with the resourceVersion as precondition, from a fresh read after each conflict. */
  modify(
    ref: ObjectRef,
    mutate: (current: KubeObject) => KubeObject | undefined,
  ): Promise<{ object: KubeObject; changed: boolean } | undefined>;
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
    const rotation = unb64(secret.data?.[CA_SECRET_ROTATION_KEY]);
    if (rotation === undefined) return { caCertPem, caKeyPem };
    return {
      caCertPem,
      caKeyPem,
      rotation: parseRotationRecord(rotation, `${this.describe()} ${CA_SECRET_ROTATION_KEY}`),
    };
  }

  async update(mutate: (current: CaSecretData) => CaSecretData | undefined): Promise<CaSecretData> {
    const ref = { group: '', version: 'v1', plural: 'secrets', namespace: this.namespace, name: CA_SECRET_NAME };
    let outcome: { object: KubeObject; changed: boolean } | undefined;
    try {
      // One Secret holds the whole state, so each step lands whole; the precondition makes the
      // replicas that run the same step at the same moment agree on one new root.
      outcome = await this.api.modify(ref, (secret) => {
        const next = mutate(this.decode(secret));
        if (!next) return undefined;
        const bundle = next.rotation
          ? trustedRoots({ signing: { certPem: next.caCertPem, keyPem: next.caKeyPem }, rotation: next.rotation })
          : [next.caCertPem];
        return {
          ...secret,
          data: {
            ...secret.data,
            'ca-cert.pem': b64(next.caCertPem),
            'ca-key.pem': b64(next.caKeyPem),
            'root-cert.pem': b64(bundle.join('')),
            ...(next.rotation ? { [CA_SECRET_ROTATION_KEY]: b64(JSON.stringify(next.rotation)) } : {}),
          },
        };
      });
    } catch (err) {
      throw new Error(`updating ${this.describe()} failed: ${(err as Error).message}`);
    }
    if (!outcome) throw new Error(`${this.describe()} does not exist (deleted while running?)`);
    return this.decode(outcome.object);
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
