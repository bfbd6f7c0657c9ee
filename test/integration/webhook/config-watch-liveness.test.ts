// The webhook configuration watch asks for a timeout like every other watch (client-go's
// [5 min, 10 min)), and a watch that goes silent is restarted, so a configuration added later is
// still patched.

import { TestApiServer, eventually } from '../../support/apiserver';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { ServingCertHolder } from '../../../src/server/serving-cert';
import { WebhookConfigController } from '../../../src/webhook/config-controller';
import { throwawayCert } from '../../support/webhook/harness';

const WEBHOOKS = 'admissionregistration.k8s.io/validatingwebhookconfigurations';

function vwc(name: string) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, labels: { 'istio.io/rev': 'default' } },
    webhooks: [
      {
        name: 'rev.validation.istio.io',
        failurePolicy: 'Ignore',
        clientConfig: { service: { name: 'istiod', namespace: 'istio-system', path: '/validate' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
}

const caBundleOf = (api: TestApiServer, name: string): string | undefined =>
  (
    api.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, name)?.['webhooks'] as
      { clientConfig?: { caBundle?: string } }[] | undefined
  )?.[0]?.clientConfig?.caBundle;

let api: TestApiServer;
let controller: WebhookConfigController | undefined;

beforeEach(async () => {
  api = await TestApiServer.start();
});

afterEach(async () => {
  await controller?.stop();
  controller = undefined;
  await api.close();
});

function startController(extra: { watchTimeoutSeconds?: number; stallMarginMs?: number } = {}): void {
  const certs = new ServingCertHolder();
  certs.set(throwawayCert('root-1'));
  controller = new WebhookConfigController({
    client: new KubeClient(loadKubeConfig(api.writeKubeconfig())),
    revision: 'default',
    namespace: 'istio-system',
    certs,
    backoff: { initialMs: 10, maxMs: 200 },
    probe: () => Promise.resolve({ ready: false, detail: 'not probed in this test' }),
    ...extra,
  });
  controller.start();
}

test("the webhook configuration watch asks for a timeout in client-go's [5 min, 10 min)", async () => {
  startController();
  await eventually('the watch is open', () => api.watchTimeouts().some((w) => w.resource === WEBHOOKS));
  const [watch] = api.watchTimeouts().filter((w) => w.resource === WEBHOOKS);
  expect(watch?.timeoutSeconds).toBeGreaterThanOrEqual(300);
  expect(watch?.timeoutSeconds).toBeLessThan(600);
});

test('a silent webhook configuration watch is restarted and a configuration added later is patched', async () => {
  api.put(vwc('istio-validator-first'));
  startController({ watchTimeoutSeconds: 1, stallMarginMs: 300 });
  await eventually('the first configuration is patched', () => caBundleOf(api, 'istio-validator-first') !== undefined);
  await eventually('the watch is open', () => api.watchTimeouts().some((w) => w.resource === WEBHOOKS));
  api.stallWatches();
  api.put(vwc('istio-validator-later'));
  await eventually(
    'the configuration added while the watch was silent is patched',
    () => caBundleOf(api, 'istio-validator-later') !== undefined,
    8_000,
  );
});
