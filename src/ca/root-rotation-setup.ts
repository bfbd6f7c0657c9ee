// Where the CA's key material comes from at start: a plugged-in CA folder, or the self-signed
// root with its rotation (root-rotation.ts) checked once before anything signs, and the rotator
// that keeps checking it. Kept apart from index.ts, which wires the rest of the CA.

import { scopedLogger } from '../log/logger';
import type { CaHostDeps } from './host-deps';
import type { CaSecretStore } from './roots/ca-secret-store';
import type { CaKeyMaterial } from './signing/key-material';
import { loadPluggedInCa } from './roots/plugged-in';
import { ensureSelfSignedRoot, generateRoot, selfSignedMaterial, SelfSignedOptions } from './roots/self-signed';
import { RootRotator, toRootState } from './roots/root-rotation-driver';
import { RootState, trustedRoots } from './roots/root-rotation';

const log = scopedLogger('ca');

export interface LoadedKeyMaterial {
  material: CaKeyMaterial;
  /** Self-signed with rotation on: the rotator, and the other root of a rotation in progress. */
  rotator?: RootRotator;
  rotationRoots: string[];
}

/** The material for a self-signed root state, and the roots trusted beside it. */
export function selfSignedView(
  state: RootState,
  store: CaSecretStore,
): { material: CaKeyMaterial; rotationRoots: string[] } {
  const material = selfSignedMaterial({ caCertPem: state.signing.certPem, caKeyPem: state.signing.keyPem }, store);
  return { material, rotationRoots: trustedRoots(state).filter((pem) => pem !== state.signing.certPem) };
}

export async function loadKeyMaterial(ctx: CaHostDeps, secretStore: CaSecretStore): Promise<LoadedKeyMaterial> {
  const env = ctx.options.env;
  const plugged = loadPluggedInCa(env.ROOT_CA_DIR);
  if (plugged) {
    log.info({ dir: env.ROOT_CA_DIR, signer: plugged.signingCert.subject }, 'using the plugged-in CA');
    return { material: plugged, rotationRoots: [] };
  }
  const rootOpts: SelfSignedOptions = {
    trustDomain: ctx.mesh.current().trustDomain,
    keyType: env.CITADEL_SELF_SIGNED_CA_KEY_TYPE === 'ECDSA' ? 'ECDSA' : 'RSA',
    rsaBits: env.CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE,
    ttlMs: env.CITADEL_SELF_SIGNED_CA_CERT_TTL,
  };
  const stored = await ensureSelfSignedRoot(secretStore, rootOpts);
  if (env.CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL <= 0) {
    return { ...selfSignedView(toRootState(stored), secretStore) };
  }
  if (env.CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY <= env.CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL) {
    // Another replica may learn of a new root one check later and hand out chains without it.
    log.warn(
      {
        distributionDelay: env.CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY,
        checkInterval: env.CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL,
      },
      'CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY should be well above the check interval; a rotation may break peers that have not received the new root',
    );
  }
  if (env.CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY < env.DEFAULT_WORKLOAD_CERT_TTL) {
    // A workload renews its certificate (and so receives the new root) once per TTL at least: a new
    // root that signs sooner meets peers that do not trust it yet.
    log.warn(
      {
        distributionDelay: env.CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY,
        defaultWorkloadCertTtl: env.DEFAULT_WORKLOAD_CERT_TTL,
      },
      'CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY is shorter than DEFAULT_WORKLOAD_CERT_TTL; a rotated root may sign before every workload has renewed and received it',
    );
  }
  const rotator = new RootRotator(secretStore, {
    policy: {
      gracePercentile: env.CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE,
      distributionDelayMs: env.CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY,
      maxLeafTtlMs: env.MAX_WORKLOAD_CERT_TTL,
      checkIntervalMs: env.CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL,
    },
    generate: () => generateRoot(rootOpts),
    metrics: ctx.metrics,
  });
  // The first check runs before anything signs: a root found past its grace period, or expired
  // while istiod-ts was down, is dealt with before the first certificate is issued. A check that
  // fails (the API server, or RBAC without update on Secrets) leaves the stored root in use; the
  // next check retries.
  let state: RootState;
  try {
    state = await rotator.check();
  } catch (err) {
    log.error({ err: (err as Error).message }, 'root rotation check failed at start; using the stored root');
    state = toRootState(stored);
  }
  return { ...selfSignedView(state, secretStore), rotator };
}
