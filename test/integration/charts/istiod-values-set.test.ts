// Values given with `helm --set`, as a platform engineer passes them to Istio's chart. Helm types a
// --set value itself: integers and booleans become numbers and booleans, anything else (0.1,
// 1.28) stays text. Each value here is one Istio's chart renders; charts/istiod must render it
// too, read the way the template reads it, or refuse it naming the path.

import { findObject, helmTemplate, helmTemplateRaw } from '../../support/helm';
import { deploymentOf } from './istiod-objects';

const NS = 'istio-system';
const withSet = (set: string[]) => helmTemplate('istiod', { namespace: NS, set });

interface HpaMetric {
  resource: { name: string; target: { averageUtilization: number } };
}
const hpaTargets = (set: string[]) =>
  Object.fromEntries(((findObject(withSet(set), 'HorizontalPodAutoscaler')['spec'] as { metrics: HpaMetric[] }).metrics).map((m) => [m.resource.name, m.resource.target.averageUtilization]));

describe('charts/istiod takes Istio chart values through --set', () => {
  test('pilot.traceSampling=0.1, which --set passes as the text "0.1", and traceSampling as a number', () => {
    expect(helmTemplateRaw('istiod', { namespace: NS, set: ['pilot.traceSampling=0.1'] }).stderr).toBe('');
    expect(() => withSet(['traceSampling=100'])).not.toThrow();
    expect(() => helmTemplate('istiod', { namespace: NS, values: { pilot: { traceSampling: 0.5 } } })).not.toThrow();
  });

  test('a CPU or memory utilization target above 100 %, which HPAs accept, reaches the HPA', () => {
    expect(hpaTargets(['pilot.cpu.targetAverageUtilization=150', 'pilot.memory.targetAverageUtilization=120'])).toEqual({ cpu: 150, memory: 120 });
  });

  test('label values --set types as numbers or booleans are rendered as label text', () => {
    const objects = withSet(['pilot.podLabels.version=2', 'deploymentLabels.canary=true']);
    expect(deploymentOf(objects).podLabels['version']).toBe('2');
    expect(findObject(objects, 'Deployment').metadata.labels?.['canary']).toBe('true');
  });

  test('env values --set types as booleans or numbers are rendered as text', () => {
    const env = deploymentOf(withSet(['pilot.env.PILOT_ENABLE_ALPHA_GATEWAY_API=true', 'pilot.env.PILOT_PUSH_THROTTLE=100'])).container.env;
    expect(env.filter((e) => e.name.startsWith('PILOT_') && e.value !== undefined && ['true', '100'].includes(e.value)).map((e) => [e.name, e.value])).toEqual([
      ['PILOT_ENABLE_ALPHA_GATEWAY_API', 'true'],
      ['PILOT_PUSH_THROTTLE', '100'],
    ]);
  });

  test('global.externalIstiod=true sets EXTERNAL_ISTIOD as Istio’s chart does, and pilot.env.EXTERNAL_ISTIOD wins over it', () => {
    const external = (set: string[]) => deploymentOf(withSet(set)).container.env.filter((e) => e.name === 'EXTERNAL_ISTIOD').map((e) => e.value);
    expect(external([])).toEqual([]);
    expect(external(['global.externalIstiod=true'])).toEqual(['true']);
    expect(external(['global.externalIstiod=true', 'pilot.env.EXTERNAL_ISTIOD=false'])).toEqual(['false']);
  });

  test('a tag that looks like a number stays the tag given', () => {
    expect(deploymentOf(withSet(['tag=1.28'])).container.image).toMatch(/:1\.28$/);
  });

  const refused: [string, string, RegExp][] = [
    ['a traceSampling that is not a number', 'pilot.traceSampling=often', /at '\/pilot\/traceSampling'/],
    ['a traceSampling above 100 %', 'traceSampling=101', /at '\/traceSampling'/],
    ['a negative utilization target', 'cpu.targetAverageUtilization=-1', /at '\/cpu\/targetAverageUtilization'/],
  ];
  test.each(refused)('refuses %s, naming the path', (_name, set, message) => {
    const r = helmTemplateRaw('istiod', { namespace: NS, set: [set] });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });
});
