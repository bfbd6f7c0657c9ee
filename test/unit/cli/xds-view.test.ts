// How the table renders a Service port whose targetPort is a name (target_port 0 on the wire).

import { renderPort, workloadTargets } from '../../../src/cli/xds-view';
import type { DecodedResource } from '../../../src/cli/xds-view';

const KEY = 'shop/web.shop.svc.cluster.local';
const pod = (targetPort: number): DecodedResource => ({
  kind: 'workload',
  name: `pod-${targetPort}`,
  version: '1',
  value: { services: { [KEY]: { ports: [{ servicePort: 80, targetPort }] } } },
});

test('a numeric targetPort prints as sent', () => {
  expect(renderPort(KEY, { servicePort: 80, targetPort: 8080 }, new Map())).toBe('80->8080');
});

test('a named targetPort prints the number the workloads map it to, every distinct one when pods differ', () => {
  expect(renderPort(KEY, { servicePort: 80 }, workloadTargets([pod(9000), pod(9000)]))).toBe('80->9000');
  expect(renderPort(KEY, { servicePort: 80 }, workloadTargets([pod(9001), pod(9000)]))).toBe('80->9000|9001');
});

test('a named targetPort no held workload maps prints "named", never 0', () => {
  expect(renderPort(KEY, { servicePort: 80 }, workloadTargets([]))).toBe('80->named');
  expect(renderPort('other/x', { servicePort: 80 }, workloadTargets([pod(9000)]))).toBe('80->named');
});
