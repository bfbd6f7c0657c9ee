// The Prometheus registry every component registers on, with Node's process metrics.

import { Registry, collectDefaultMetrics, Gauge } from 'prom-client';
import { versionInfo } from './version';

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // istiod exports its build as istio_build{component, tag}; dashboards key on it.
  const build = new Gauge({
    name: 'istio_build',
    help: 'Istio component build info',
    labelNames: ['component', 'tag'],
    registers: [registry],
  });
  build.set({ component: 'pilot', tag: versionInfo().version }, 1);
  return registry;
}
