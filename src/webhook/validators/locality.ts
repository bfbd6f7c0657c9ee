// Locality-weighted and zone-aware load balancing settings of a DestinationRule (and meshConfig):
// weights that add up to 100, localities that do not overlap, failover between regions only.

import { isObject, JsonObject, list, obj, str, strList } from './common/fields';
import { at, idx, Report } from './common/report';

const TOPOLOGY_LABELS = ['topology.kubernetes.io/region', 'topology.kubernetes.io/zone', 'topology.istio.io/subzone'];
export const TOTAL_LOCALITY_WEIGHT = 100;

/** "region/zone/subzone" patterns must be distinct and not contain one another. */
export function localitiesError(localities: string[]): string | undefined {
  // region -> zone -> subzone; "*" marks "everything below".
  const tree = new Map<string, Map<string, Set<string>>>();
  for (const locality of localities) {
    const stars = locality.split('*').length - 1;
    if (stars > 1 || (stars === 1 && !locality.endsWith('*')))
      return `locality ${locality} wildcard '*' number can not exceed 1 and must be in the end`;
    if (tree.has('*')) return `locality ${locality} overlap with previous specified ones`;
    const parts = locality.split('/');
    const items = parts.length > 3 ? [...parts.slice(0, 2), parts.slice(2).join('/')] : parts;
    if (items.some((p) => p === '')) return `locality ${locality} must not contain empty region/zone/subzone info`;
    const [region, zone, subzone] = items as [string, string?, string?];
    const overlap = `locality ${locality} overlap with previous specified ones`;
    const zones = tree.get(region);
    if (zone === undefined) {
      if (zones) return overlap;
      tree.set(region, new Map([['*', new Set(['*'])]]));
    } else if (subzone === undefined) {
      if (zones?.has('*') || zones?.has(zone)) return overlap;
      if (zones) zones.set(zone, new Set(['*']));
      else tree.set(region, new Map([[zone, new Set(['*'])]]));
    } else {
      if (zones?.has('*')) return overlap;
      const subzones = zones?.get(zone);
      if (subzones?.has('*') || subzones?.has(subzone)) return overlap;
      if (subzones) subzones.add(subzone);
      else if (zones) zones.set(zone, new Set([subzone]));
      else tree.set(region, new Map([[zone, new Set([subzone])]]));
    }
  }
  return undefined;
}

interface Failover {
  from: string;
  to: string;
}

function readFailover(r: Report, lb: JsonObject, path: string): Failover[] {
  return (list(r, lb['failover'], at(path, 'failover')) ?? []).map((f, i) => {
    const o = obj(r, f, idx(at(path, 'failover'), i)) ?? {};
    return {
      from: str(r, o['from'], idx(at(path, 'failover'), i) + '.from') ?? '',
      to: str(r, o['to'], idx(at(path, 'failover'), i) + '.to') ?? '',
    };
  });
}

function checkFailover(r: Report, failover: Failover[], path: string, what: 'locality lb' | 'zone aware lb'): void {
  failover.forEach((f, i) => {
    const p = idx(at(path, 'failover'), i);
    if (f.from === f.to) r.error(p, `${what} failover settings must specify different regions`);
    if (f.from.includes('/') || f.to.includes('/')) {
      r.error(
        p,
        what === 'locality lb'
          ? 'locality lb failover only specify region'
          : 'zone aware lb failover only specifies region; zone and subzone failover are handled automatically',
      );
    }
    if (f.from.includes('*') || f.to.includes('*'))
      r.error(p, `${what} failover region should not contain '*' wildcard`);
  });
}

export function checkLocalityLb(r: Report, v: unknown, path: string, hasOutlier: boolean): void {
  const lb = obj(r, v, path);
  if (!lb) return;
  const distribute = list(r, lb['distribute'], at(path, 'distribute')) ?? [];
  const failover = readFailover(r, lb, path);
  const priority = strList(r, lb['failoverPriority'], at(path, 'failoverPriority')) ?? [];
  if (distribute.length > 0 && failover.length > 0) {
    r.error(path, "can not simultaneously specify 'distribute' and 'failover'");
    return;
  }
  if (failover.length > 0) {
    const topo = priority.find((l) => TOPOLOGY_LABELS.includes(l));
    if (topo) {
      r.error(
        at(path, 'failoverPriority'),
        `can not simultaneously set 'failover' and topology label '${topo}' in 'failover_priority'`,
      );
      return;
    }
  }
  const sources: string[] = [];
  for (let i = 0; i < distribute.length; i++) {
    const p = idx(at(path, 'distribute'), i);
    const d = isObject(distribute[i]) ? (distribute[i] as JsonObject) : {};
    sources.push(typeof d['from'] === 'string' ? d['from'] : '');
    const to = isObject(d['to']) ? d['to'] : {};
    let total = 0;
    for (const weight of Object.values(to)) {
      // Only numbers and numeric strings are weights; Number() of a nested list would recurse.
      const w = typeof weight === 'number' ? weight : typeof weight === 'string' ? Number(weight) : NaN;
      if (!(w > 0 && w <= TOTAL_LOCALITY_WEIGHT)) {
        r.error(at(p, 'to'), 'locality weight must be in range [1, 100]');
        return;
      }
      total += w;
    }
    if (total !== TOTAL_LOCALITY_WEIGHT) {
      r.error(at(p, 'to'), `total locality weight ${total} != ${TOTAL_LOCALITY_WEIGHT}`);
      return;
    }
    const err = localitiesError(Object.keys(to));
    if (err) r.error(at(p, 'to'), err);
  }
  const err = localitiesError(sources);
  if (err) r.error(at(path, 'distribute'), err);
  if ((failover.length > 0 || priority.length > 0) && !hasOutlier)
    r.warn(path, 'outlier detection policy must be provided for failover');
  checkFailover(r, failover, path, 'locality lb');
}

export function checkZoneAwareLb(r: Report, v: unknown, path: string, hasOutlier: boolean): void {
  const lb = obj(r, v, path);
  if (!lb) return;
  const failover = readFailover(r, lb, path);
  const priority = strList(r, lb['failoverPriority'], at(path, 'failoverPriority')) ?? [];
  for (const l of priority.filter((p) => TOPOLOGY_LABELS.includes(p))) {
    r.error(
      at(path, 'failoverPriority'),
      `'failover_priority' for zone aware lb must not use topology label '${l}'; region- and zone-level routing are handled automatically`,
    );
  }
  if ((failover.length > 0 || priority.length > 0) && !hasOutlier)
    r.warn(path, 'outlier detection policy must be provided for failover');
  checkFailover(r, failover, path, 'zone aware lb');
}
