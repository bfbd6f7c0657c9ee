// xDS metrics under istiod's names, so existing dashboards and alerts keep working.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../contract/xds-resources';

/** The `type` label value of a type URL. */
export function metricType(typeUrl: string): string {
  if (typeUrl === ADDRESS_TYPE_URL) return 'address';
  if (typeUrl === AUTHORIZATION_TYPE_URL) return 'authorization';
  return 'other';
}

const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3, 5, 10, 20, 30];

export class XdsMetrics {
  /** pilot_xds: connected streams, by type subscribed. */
  readonly connected: Gauge<'type'>;
  readonly pushes: Counter<'type'>;
  readonly pushTime: Histogram<'type'>;
  readonly convergence: Histogram;
  readonly rejects: Counter<'type'>;
  readonly sendTime: Histogram;

  /**
   * Responses sent since the last scrape, by type. A response is counted per stream per push, on
   * the hot path of a fan-out to 1,000 streams; prom-client's inc() costs about a microsecond, so
   * the counter is brought up to date when it is read instead.
   */
  private readonly unreported = new Map<string, number>();

  /** Counts one response sent for a type. */
  pushed(typeUrl: string): void {
    const type = metricType(typeUrl);
    this.unreported.set(type, (this.unreported.get(type) ?? 0) + 1);
  }

  private reportPushes(): void {
    for (const [type, n] of this.unreported) if (n > 0) this.pushes.inc({ type }, n);
    this.unreported.clear();
  }

  constructor(registry: Registry) {
    const registers = [registry];
    this.connected = new Gauge({
      name: 'pilot_xds',
      help: 'Number of endpoints connected to this pilot using XDS.',
      labelNames: ['type'],
      registers,
    });
    const reportPushes = () => this.reportPushes();
    this.pushes = new Counter({
      name: 'pilot_xds_pushes',
      help: 'Pilot build and send errors for lds, rds, cds and eds.',
      labelNames: ['type'],
      registers,
      collect: reportPushes,
    });
    this.pushTime = new Histogram({
      name: 'pilot_xds_push_time',
      help: 'Total time in seconds Pilot takes to push lds, rds, cds and eds.',
      labelNames: ['type'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.convergence = new Histogram({
      name: 'pilot_proxy_convergence_time',
      help: 'Delay in seconds between config change and a proxy receiving all required configuration.',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rejects = new Counter({
      name: 'pilot_total_xds_rejects',
      help: 'Total number of XDS responses from pilot rejected by proxy.',
      labelNames: ['type'],
      registers,
    });
    this.sendTime = new Histogram({
      name: 'pilot_xds_send_time',
      help: 'Total time in seconds Pilot takes to send generated configuration.',
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }
}
