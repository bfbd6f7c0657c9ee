// `istiod-ts validate` spawned as a user runs it: an unknown enum name in a file is reported on
// one line naming the field and the enum, and the exit status says the file is invalid.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli';

const DESTINATION_RULE = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: reviews
  namespace: shop
spec:
  host: reviews.shop.svc.cluster.local
  trafficPolicy:
    loadBalancer:
      simple: FASTEST
`;

describe('istiod-ts validate, spawned', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'validate-enums-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an unknown enum name exits 1 with one line naming the field and the enum', () => {
    const file = join(dir, 'dr.yaml');
    writeFileSync(file, DESTINATION_RULE);
    const r = runCli(['validate', '-f', file]);
    expect(r.status).toBe(1);
    const lines = r.stdout.split('\n').filter((l) => l.includes(': error: '));
    expect(lines).toEqual([
      `${file}[0] DestinationRule shop/reviews: error: spec.trafficPolicy.loadBalancer.simple: unknown value "FASTEST" for enum istio.networking.v1alpha3.LoadBalancerSettings.SimpleLB`,
    ]);
  });

  it('the same rule by its number decodes and the file is valid', () => {
    const file = join(dir, 'dr-number.yaml');
    writeFileSync(file, DESTINATION_RULE.replace('simple: FASTEST', 'simple: 4'));
    const r = runCli(['validate', '-f', file]);
    expect(r.stdout).toContain('1 object(s) checked, 0 invalid');
    expect(r.status).toBe(0);
  });
});
