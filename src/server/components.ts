// The domain components on top of the store: the CA (and the authenticator it shares with xDS),
// the ambient index, and the xDS server that serves it.

import type { KubeConfig } from '@kubernetes/client-node';
import { startCertificateAuthority } from '../ca';
import { AmbientIndex } from '../ambient/ambient-index';
import { registerAmbientDebug } from '../ambient/debug';
import { startXdsServer } from '../xds/server';
import type { ServerContext } from './context';

export async function startComponents(ctx: ServerContext, kubeConfig: KubeConfig | undefined): Promise<void> {
  const ca = await startCertificateAuthority(ctx, kubeConfig ? { kubeConfig } : {});
  const index = new AmbientIndex({
    store: ctx.store,
    mesh: ctx.mesh,
    clusterId: ctx.options.env.CLUSTER_ID,
    domain: ctx.options.flags.domain,
    systemNamespace: ctx.options.env.POD_NAMESPACE,
    revision: ctx.options.env.REVISION,
    enableDryRun: ctx.options.env.AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY,
  });
  registerAmbientDebug(ctx.debug, index);
  ctx.onShutdown(() => index.close());
  // The CA and the xDS server register their own shutdown hooks.
  startXdsServer(ctx, index, ca.authenticator);
}
