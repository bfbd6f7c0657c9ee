// Hostile reviews through the real HTTPS listener: each gets HTTP 200 and an AdmissionReview
// answer, and the process goes on answering ordinary reviews on the same connection.

import * as https from 'node:https';
import { startWebhookServer, WebhookServerHandle } from '../../../src/webhook/server';
import {
  deepObjectText,
  DEEP_PLACEHOLDER,
  envoyFilter,
  reviewBytes,
  virtualService,
} from '../../support/webhook/hostile-input';
import {
  admissionReview,
  policy,
  post,
  throwawayCert,
  webhookContext,
  WebhookHarness,
} from '../../support/webhook/harness';
import { parseReview } from '../../support/webhook/review';

const cert = throwawayCert('istiod-hostile');

describe('webhook HTTPS server under hostile reviews', () => {
  let h: WebhookHarness;
  let server: WebhookServerHandle;
  let agent: https.Agent;
  const call = (body: Buffer | string) => post(agent, server.port!, { body, ca: cert.rootsPem });

  beforeAll(async () => {
    h = webhookContext();
    h.certs.set(cert);
    server = await startWebhookServer(h.ctx);
    agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  });

  afterAll(async () => {
    agent.destroy();
    await h.shutdown();
  });

  test('a 5,000-level EnvoyFilter and a 10,000-host VirtualService are answered, then an ordinary review still is', async () => {
    const deep = await call(reviewBytes(envoyFilter(DEEP_PLACEHOLDER), { uid: 'deep', splice: deepObjectText(5_000) }));
    expect(deep.status).toBe(200);
    expect(JSON.parse(deep.body)).toMatchObject({ kind: 'AdmissionReview', response: { uid: 'deep', allowed: true } });

    const hosts = Array(10_000).fill('a.example.com');
    const wide = await call(
      reviewBytes(virtualService({ hosts, http: [{ route: [{ destination: { host: 'a.example.com' } }] }] }), {
        uid: 'wide',
      }),
    );
    expect(wide.status).toBe(200);
    expect(parseReview(wide.body).response).toEqual({
      uid: 'wide',
      allowed: false,
      status: {
        metadata: {},
        message:
          'configuration is invalid: spec.hosts: duplicate hosts in virtual service: a.example.com & a.example.com',
      },
    });

    const normal = await call(
      admissionReview(policy({ rules: [{ from: [{ source: { namespaces: ['a'] } }] }] }), { uid: 'after' }),
    );
    expect(normal.status).toBe(200);
    expect(JSON.parse(normal.body)).toEqual({
      kind: 'AdmissionReview',
      apiVersion: 'admission.k8s.io/v1',
      response: { uid: 'after', allowed: true },
    });
    expect(normal.reusedSocket).toBe(true);
  });
});
