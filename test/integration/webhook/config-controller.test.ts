import { TestApiServer, eventually } from '../../support/apiserver';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { ServingCertHolder } from '../../../src/server/serving-cert';
import { caBundleError, desiredWebhookConfig, WebhookConfigController } from '../../../src/webhook/config-controller';
import { probeOutcomeReady, webhookRejectsInvalidConfig } from '../../../src/webhook/readiness-probe';
import { KubeApiError } from '../../../src/store/kube/client';
import { throwawayCert } from '../../support/webhook/harness';

const FAST = { initialMs: 10, maxMs: 200 };

function vwc(name: string, rev: string | undefined, failurePolicy = 'Ignore') {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, ...(rev ? { labels: { 'istio.io/rev': rev } } : {}) },
    webhooks: [
      {
        name: 'rev.validation.istio.io',
        failurePolicy,
        clientConfig: { service: { name: 'istiod', namespace: 'istio-system', path: '/validate' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
      {
        name: 'rev2.validation.istio.io',
        failurePolicy,
        clientConfig: { service: { name: 'istiod', namespace: 'istio-system', path: '/validate' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
}

type Webhooks = { failurePolicy?: string; clientConfig?: { caBundle?: string } }[];
const webhooksOf = (api: TestApiServer, name: string) =>
  (api.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, name)?.['webhooks'] ??
    []) as Webhooks;
const b64 = (pem: string) => Buffer.from(pem).toString('base64');

describe('webhook configuration controller (test API server)', () => {
  let api: TestApiServer;
  let client: KubeClient;
  let certs: ServingCertHolder;
  let controller: WebhookConfigController | undefined;
  const cert = throwawayCert('root-1');

  beforeEach(async () => {
    api = await TestApiServer.start();
    client = new KubeClient(loadKubeConfig(api.writeKubeconfig()));
    certs = new ServingCertHolder();
    certs.set(cert);
  });

  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
    await api.close();
  });

  test('writes the mesh root into every caBundle and switches Ignore to Fail after the dry-run probe', async () => {
    api.put(vwc('istio-validator-istio-system', 'default'));
    // The real probe (a dry-run create of a networking.istio.io Gateway in istiod's namespace),
    // observed: the test API server has no Istio CRDs, which istiod also counts as ready.
    const outcomes: { ready: boolean; detail: string; policiesBefore: (string | undefined)[] }[] = [];
    const probe = async () => {
      const policiesBefore = webhooksOf(api, 'istio-validator-istio-system').map((w) => w.failurePolicy);
      const outcome = await webhookRejectsInvalidConfig(client, 'istio-system', 'default');
      outcomes.push({ ...outcome, policiesBefore });
      return outcome;
    };
    controller = new WebhookConfigController({
      client,
      revision: 'default',
      namespace: 'istio-system',
      certs,
      backoff: FAST,
      probe,
    });
    controller.start();
    await eventually('failurePolicy Fail', () =>
      webhooksOf(api, 'istio-validator-istio-system').every((w) => w.failurePolicy === 'Fail'),
    );
    expect(webhooksOf(api, 'istio-validator-istio-system').map((w) => w.clientConfig?.caBundle)).toEqual([
      b64(cert.rootsPem),
      b64(cert.rootsPem),
    ]);
    expect(outcomes[0]).toMatchObject({ ready: true, policiesBefore: ['Ignore', 'Ignore'] });
    expect(outcomes[0]!.detail).toContain('HTTP 404');
    expect(controller.failingClosed).toBe(true);
  });

  test('until the probe shows the webhook rejecting, only the caBundle is written and Ignore stays', async () => {
    api.put(vwc('istio-validator', 'default'));
    let ready = false;
    let probes = 0;
    controller = new WebhookConfigController({
      client,
      revision: 'default',
      namespace: 'istio-system',
      certs,
      backoff: FAST,
      probe: () => {
        probes++;
        return Promise.resolve({ ready, detail: ready ? 'denied the request' : 'accepted' });
      },
    });
    controller.start();
    await eventually('caBundle written', () =>
      webhooksOf(api, 'istio-validator').every((w) => w.clientConfig?.caBundle === b64(cert.rootsPem)),
    );
    await eventually('probe retried', () => probes >= 3);
    expect(webhooksOf(api, 'istio-validator').map((w) => w.failurePolicy)).toEqual(['Ignore', 'Ignore']);
    ready = true;
    await eventually('failurePolicy Fail', () =>
      webhooksOf(api, 'istio-validator').every((w) => w.failurePolicy === 'Fail'),
    );
  });

  test('a root change rewrites the bundle', async () => {
    api.put(vwc('istio-validator', 'default'));
    controller = new WebhookConfigController({
      client,
      revision: 'default',
      namespace: 'istio-system',
      certs,
      backoff: FAST,
    });
    controller.start();
    await eventually(
      'first bundle',
      () => webhooksOf(api, 'istio-validator')[0]?.clientConfig?.caBundle === b64(cert.rootsPem),
    );
    const renewed = throwawayCert('root-2');
    certs.set(renewed);
    await eventually('new bundle', () =>
      webhooksOf(api, 'istio-validator').every((w) => w.clientConfig?.caBundle === b64(renewed.rootsPem)),
    );
  });

  test('configurations of another revision, or unlabelled, are left alone', async () => {
    api.put(vwc('mine', 'default'));
    api.put(vwc('canary', 'canary'));
    api.put(vwc('unlabelled', undefined));
    controller = new WebhookConfigController({
      client,
      revision: 'default',
      namespace: 'istio-system',
      certs,
      backoff: FAST,
    });
    controller.start();
    await eventually('mine updated', () => webhooksOf(api, 'mine').every((w) => w.failurePolicy === 'Fail'));
    expect(webhooksOf(api, 'canary').map((w) => w.clientConfig?.caBundle)).toEqual([undefined, undefined]);
    expect(webhooksOf(api, 'unlabelled').map((w) => w.failurePolicy)).toEqual(['Ignore', 'Ignore']);
  });

  test('a configuration created later is picked up by the watch', async () => {
    controller = new WebhookConfigController({
      client,
      revision: 'default',
      namespace: 'istio-system',
      certs,
      backoff: FAST,
    });
    controller.start();
    await eventually('watch open', () => api.openWatches > 0);
    api.put(vwc('late', 'default'));
    await eventually('late updated', () =>
      webhooksOf(api, 'late').every(
        (w) => w.failurePolicy === 'Fail' && w.clientConfig?.caBundle === b64(cert.rootsPem),
      ),
    );
  });

  test('a policy set back to Ignore by hand is set to Fail again', async () => {
    api.put(vwc('istio-validator', 'default'));
    controller = new WebhookConfigController({
      client,
      revision: 'default',
      namespace: 'istio-system',
      certs,
      backoff: FAST,
    });
    controller.start();
    await eventually('Fail', () => webhooksOf(api, 'istio-validator').every((w) => w.failurePolicy === 'Fail'));
    const stored = api.get(
      'admissionregistration.k8s.io/v1',
      'ValidatingWebhookConfiguration',
      undefined,
      'istio-validator',
    )!;
    api.put({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      ...stored,
      webhooks: (stored['webhooks'] as Webhooks).map((w) => ({ ...w, failurePolicy: 'Ignore' })),
    });
    await eventually('Fail again', () => webhooksOf(api, 'istio-validator').every((w) => w.failurePolicy === 'Fail'));
  });
});

describe('webhook configuration rules', () => {
  const cert = throwawayCert('rules');
  const current = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'x' },
    webhooks: [{ failurePolicy: 'Ignore', clientConfig: { caBundle: 'old' } }],
  };

  test('no write is needed when bundles match and the policy is already Fail or unset', () => {
    expect(
      desiredWebhookConfig(
        {
          ...current,
          webhooks: [{ failurePolicy: 'Fail', clientConfig: { caBundle: 'b' } }, { clientConfig: { caBundle: 'b' } }],
        },
        'b',
        true,
      ),
    ).toBeUndefined();
  });

  test('without fail-close only the bundle changes', () => {
    expect(desiredWebhookConfig(current, 'new', false)?.['webhooks']).toEqual([
      { failurePolicy: 'Ignore', clientConfig: { caBundle: 'new' } },
    ]);
  });

  test('a bundle must begin with a parseable certificate', () => {
    expect(caBundleError(cert.rootsPem)).toBeUndefined();
    expect(caBundleError(cert.privateKeyPem)).toMatch(/not CERTIFICATE/);
    expect(caBundleError('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')).toMatch(/does not parse/);
    expect(caBundleError('')).toBe('the CA bundle has no PEM block');
  });

  test.each([
    ['admission webhook "validation.istio.io" denied the request: configuration is invalid', true],
    ['the server could not find the requested resource', true],
    ['admission webhook does not support dry run', true],
    ['Internal error occurred: failed calling webhook: connection refused', false],
  ])('a dry-run answer %j means ready: %s', (message, ready) => {
    expect(probeOutcomeReady(new KubeApiError(400, 'BadRequest', message))).toBe(ready);
  });

  test('a dry-run that is accepted means the webhook is not called yet', () => {
    expect(probeOutcomeReady(undefined)).toBe(false);
  });
});
