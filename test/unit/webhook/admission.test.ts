import { MAX_REQUEST_BODY_BYTES, reviewAdmission } from '../../../src/webhook/admission';
import { parseReview } from '../../support/webhook/review';

const gateway = (extra: object = {}) => ({
  apiVersion: 'networking.istio.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'istio-system' },
  spec: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*.example.com'] }] },
  ...extra,
});

function review(
  object: unknown,
  opts: { apiVersion?: string; operation?: string; uid?: string; dryRun?: boolean } = {},
) {
  return Buffer.from(
    JSON.stringify({
      apiVersion: opts.apiVersion ?? 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: opts.uid ?? 'uid-1',
        kind: { group: 'networking.istio.io', version: 'v1', kind: 'Gateway' },
        resource: { group: 'networking.istio.io', version: 'v1', resource: 'gateways' },
        namespace: 'istio-system',
        operation: opts.operation ?? 'CREATE',
        object,
        dryRun: opts.dryRun ?? false,
      },
    }),
  );
}

function answer(body: Buffer, contentType = 'application/json') {
  const reply = reviewAdmission(body, contentType);
  return { reply, json: reply.status === 200 ? parseReview(reply.body) : undefined };
}

describe('AdmissionReview handling', () => {
  test('a valid object is allowed, answered in the request version with its uid', () => {
    const { reply, json } = answer(review(gateway(), { uid: 'abc' }));
    expect(reply.status).toBe(200);
    expect(json).toEqual({
      kind: 'AdmissionReview',
      apiVersion: 'admission.k8s.io/v1',
      response: { uid: 'abc', allowed: true },
    });
    expect(reply.outcome).toEqual({
      type: 'passed',
      resource: { group: 'networking.istio.io', version: 'v1', resource: 'gateways' },
    });
  });

  test('v1beta1 reviews are answered in v1beta1', () => {
    const { json } = answer(review(gateway(), { apiVersion: 'admission.k8s.io/v1beta1' }));
    expect(json!.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(json!.response.allowed).toBe(true);
  });

  test('an invalid object is denied with HTTP 200 and every error with its path', () => {
    const bad = gateway({ spec: { servers: [{ port: { number: 0, protocol: 'HTTP' }, hosts: ['app'] }] } });
    const { reply, json } = answer(review(bad));
    expect(reply.status).toBe(200);
    expect(json!.response.allowed).toBe(false);
    const message: string = json!.response.status!.message;
    expect(message.startsWith('configuration is invalid: ')).toBe(true);
    expect(message).toContain('spec.servers[0].hosts[0]: short names (non FQDN) are not allowed');
    expect(message).toContain('spec.servers[0].port.number: port number 0 must be in the range 1..65535');
    expect(message).toContain('spec.servers[0].port.name: port name must be set');
    expect(reply.outcome).toMatchObject({ type: 'failed', reason: 'invalid_config' });
  });

  test('a value the decoder cannot read (an unknown enum name) is denied as istiod denies a failed conversion', () => {
    const bad = gateway({
      spec: {
        servers: [
          {
            port: { number: 443, protocol: 'HTTPS', name: 'https' },
            hosts: ['*.example.com'],
            tls: { mode: 'SIMPLER' },
          },
        ],
      },
    });
    const { json, reply } = answer(review(bad));
    expect(json!.response.allowed).toBe(false);
    expect(json!.response.status!.message).toMatch(
      /^error decoding configuration: spec\.servers\[0\]\.tls\.mode: unknown value "SIMPLER" for enum /,
    );
    expect(reply.outcome).toMatchObject({ type: 'failed', reason: 'crd_conversion_error' });
  });

  test('the always-reject annotation is denied (istiod readiness probe)', () => {
    const { json } = answer(
      review(
        gateway({
          metadata: {
            name: 'invalid-gateway',
            namespace: 'istio-system',
            annotations: { 'internal.istio.io/webhook-always-reject': 'true' },
          },
        }),
        { dryRun: true },
      ),
    );
    expect(json!.response.allowed).toBe(false);
    expect(json!.response.status!.message).toContain(
      '"internal.istio.io/webhook-always-reject" annotation found, rejecting',
    );
  });

  test('warnings are returned on allowed responses', () => {
    const withWarning = gateway({
      spec: {
        servers: [
          {
            port: { number: 443, name: 'tls', protocol: 'TLS' },
            hosts: ['*'],
            tls: { mode: 'PASSTHROUGH', serverCertificate: '/c' },
          },
        ],
      },
    });
    const { json } = answer(review(withWarning));
    expect(json!.response.allowed).toBe(true);
    expect(json!.response.warnings).toEqual([
      'spec.servers[0].tls: PASSTHROUGH mode does not use certificates, they will be ignored',
    ]);
  });

  test.each(['DELETE', 'CONNECT'])('operation %s is allowed without validation', (operation) => {
    const { json, reply } = answer(review({ garbage: true }, { operation }));
    expect(json!.response).toEqual({ uid: 'uid-1', allowed: true });
    expect(reply.outcome).toMatchObject({ type: 'failed', reason: 'unsupported_operation', allowed: true });
  });

  test('UPDATE is validated like CREATE', () => {
    const { json } = answer(review(gateway({ spec: {} }), { operation: 'UPDATE' }));
    expect(json!.response.allowed).toBe(false);
  });

  test('an unknown kind is denied as an unrecognized type', () => {
    const { json, reply } = answer(review({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }));
    expect(json!.response.status!.message).toBe('unrecognized type example.com/v1, Kind=Widget');
    expect(reply.outcome).toMatchObject({ reason: 'unknown_type' });
  });

  test('the schema is found by group and kind; an unknown version is still validated', () => {
    const { json } = answer(review(gateway({ apiVersion: 'networking.istio.io/v9' })));
    expect(json!.response.allowed).toBe(true);
  });

  test('a top-level key other than apiVersion, kind, metadata, spec and status is denied', () => {
    const { json } = answer(review(gateway({ extra: 1 })));
    expect(json!.response.status!.message).toBe('unknown field "extra" on Gateway resource istio-system/gw');
  });

  test('status is an allowed top-level key', () => {
    const { json } = answer(review(gateway({ status: { conditions: [] } })));
    expect(json!.response.allowed).toBe(true);
  });

  test('a spec that is not an object cannot be decoded', () => {
    const { json, reply } = answer(review(gateway({ spec: 'x' })));
    expect(json!.response.status!.message).toBe('cannot decode configuration: spec must be a JSON object');
    expect(reply.outcome).toMatchObject({ reason: 'yaml_decode_error' });
  });

  test('a body that is not an AdmissionReview is denied with the decode error', () => {
    const { reply, json } = answer(Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Pod' })));
    expect(reply.status).toBe(200);
    expect(json!.response.allowed).toBe(false);
    expect(json!.response.status!.message).toBe('could not decode body: no kind "Pod" is registered for version "v1"');
  });

  test('a body that is not JSON is denied with the decode error', () => {
    const { json } = answer(Buffer.from('{nope'));
    expect(json!.response.allowed).toBe(false);
    expect(json!.response.status!.message).toMatch(/^could not decode body: /);
  });

  test('an empty body is HTTP 400', () => {
    const { reply } = answer(Buffer.alloc(0));
    expect(reply.status).toBe(400);
    expect(reply.body).toContain('no body found');
  });

  test('a content type other than application/json is HTTP 415', () => {
    expect(answer(review(gateway()), 'text/yaml').reply.status).toBe(415);
    expect(answer(review(gateway()), 'application/json; charset=utf-8').reply.status).toBe(415);
  });

  test('a body over the 6 MiB limit is HTTP 400 naming the limit', () => {
    expect(MAX_REQUEST_BODY_BYTES).toBe(6291456);
    const { reply } = answer(Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1, 0x20));
    expect(reply.status).toBe(400);
    expect(reply.body).toContain('limit is 6291456');
  });

  test('a body of exactly the limit is read', () => {
    const base = review(gateway());
    const padded = Buffer.concat([base, Buffer.alloc(MAX_REQUEST_BODY_BYTES - base.length, 0x20)]);
    expect(answer(padded).json!.response.allowed).toBe(true);
  });

  test('warnings are dropped when there is an error', () => {
    const bad = gateway({
      spec: {
        servers: [
          {
            port: { number: 443, name: 'tls', protocol: 'TLS' },
            hosts: ['app'],
            tls: { mode: 'PASSTHROUGH', serverCertificate: '/c' },
          },
        ],
      },
    });
    const { json } = answer(review(bad));
    expect(json!.response.allowed).toBe(false);
    expect(json!.response.warnings).toBeUndefined();
  });
});
