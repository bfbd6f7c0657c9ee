// The webhook's Prometheus counters, under istiod's names so existing dashboards keep working.

import { Counter, Registry } from 'prom-client';
import type { ReviewOutcome } from './admission';

export const METRIC_PASSED = 'galley_validation_passed';
export const METRIC_FAILED = 'galley_validation_failed';
export const METRIC_HTTP_ERROR = 'galley_validation_http_error';

export interface WebhookMetrics {
  record(outcome: ReviewOutcome): void;
}

/** Reuses counters already in the registry, so two servers on one registry share them. */
function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

export function webhookMetrics(registry: Registry): WebhookMetrics {
  const passed = counter(registry, METRIC_PASSED, 'Resource is valid', ['group', 'version', 'resource']);
  const failed = counter(registry, METRIC_FAILED, 'Resource validation failed', [
    'group',
    'version',
    'resource',
    'reason',
  ]);
  const httpError = counter(registry, METRIC_HTTP_ERROR, 'Resource validation http serve errors', ['status']);
  return {
    record(outcome) {
      switch (outcome.type) {
        case 'passed':
          passed.inc({ ...outcome.resource });
          break;
        case 'failed':
          // Like istiod, dry-run rejections (its own readiness probe among them) are not counted.
          if (!outcome.dryRun) failed.inc({ ...outcome.resource, reason: outcome.reason });
          break;
        case 'http-error':
          httpError.inc({ status: String(outcome.status) });
          break;
        case 'undecodable':
          break;
      }
    },
  };
}
