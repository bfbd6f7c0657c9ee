// Which waypoint a WorkloadEntry is bound to, and why not: the facts its istio.io/WaypointBound
// condition is written from. Bound exactly when ztunnel is sent the waypoint.

import { workloadWaypointFacts } from '../../../src/ambient/workload-waypoint-status';
import { computeWorkloadWaypoint } from '../../../src/ambient/waypoints';
import { workloadEntryLabels } from '../../../src/ambient/workloads';
import { gateway, namespace, viewOf, workloadEntry, type Obj } from '../../support/ambient/fixtures';

const USE = 'istio.io/use-waypoint';
const ns1 = (labels: Record<string, string> = {}) => namespace('ns1', labels);
const we = (labels: Record<string, string> = {}, specLabels?: Record<string, string>) =>
  workloadEntry('vm', 'ns1', { address: '10.0.0.9', ...(specLabels ? { labels: specLabels } : {}) }, { labels });
const forWorkloads = (name: string, ns = 'ns1') =>
  gateway(name, ns, { labels: { 'istio.io/waypoint-for': 'workload' } });

function facts(objects: Obj[], target: Obj) {
  return workloadWaypointFacts(target.object, viewOf([...objects, target]));
}

describe('WorkloadEntry waypoint facts', () => {
  test('bound through its own label, its spec.labels, or its namespace, to a workload waypoint', () => {
    const wp = forWorkloads('wp');
    const bound = { namespace: 'ns1', name: 'vm', bound: 'ns1/wp' };
    expect(facts([ns1(), wp], we({ [USE]: 'wp' }))).toEqual(bound);
    expect(facts([ns1(), wp], we({}, { [USE]: 'wp' }))).toEqual(bound);
    expect(facts([ns1({ [USE]: 'wp' }), wp], we())).toEqual(bound);
    expect(
      facts([ns1(), gateway('wp', 'ns1', { labels: { 'istio.io/waypoint-for': 'all' } })], we({ [USE]: 'wp' })),
    ).toEqual(bound);
  });

  test('naming no waypoint, or opting out, has nothing to report', () => {
    expect(facts([ns1()], we())).toEqual({ namespace: 'ns1', name: 'vm' });
    expect(facts([ns1({ [USE]: 'wp' }), forWorkloads('wp')], we({ [USE]: 'none' }))).toEqual({
      namespace: 'ns1',
      name: 'vm',
    });
  });

  test('a missing waypoint is not ready; one that admits only its own namespace denies attachment', () => {
    expect(facts([ns1()], we({ [USE]: 'wp' })).problem).toEqual({ kind: 'notReady', waypoint: 'ns1/wp' });
    const other = we({ [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'other' });
    expect(facts([ns1(), namespace('other'), forWorkloads('wp', 'other')], other).problem).toEqual({
      kind: 'attachmentDenied',
      waypoint: 'other/wp',
    });
  });

  test('a service waypoint named on the entry is the wrong traffic type; inherited from the namespace it is no error', () => {
    const serviceOnly = gateway('wp', 'ns1'); // istio.io/waypoint-for defaults to service
    expect(facts([ns1(), serviceOnly], we({ [USE]: 'wp' })).problem).toEqual({
      kind: 'unsupportedTrafficType',
      waypoint: 'ns1/wp',
      trafficType: 'workload',
    });
    expect(facts([ns1({ [USE]: 'wp' }), serviceOnly], we())).toEqual({ namespace: 'ns1', name: 'vm' });
  });

  test('an entry that is an instance of a waypoint reports nothing, whatever it names', () => {
    const instance = we({ 'gateway.networking.k8s.io/gateway-name': 'wp', [USE]: 'missing' });
    expect(facts([ns1(), forWorkloads('wp')], instance)).toEqual({ namespace: 'ns1', name: 'vm' });
  });

  test('bound exactly when ztunnel is sent the waypoint', () => {
    const cases: { objects: Obj[]; target: Obj }[] = [
      { objects: [ns1(), forWorkloads('wp')], target: we({ [USE]: 'wp' }) },
      { objects: [ns1()], target: we({ [USE]: 'wp' }) },
      { objects: [ns1({ [USE]: 'wp' }), forWorkloads('wp')], target: we() },
      { objects: [ns1(), gateway('wp', 'ns1')], target: we({ [USE]: 'wp' }) },
      { objects: [ns1(), forWorkloads('wp')], target: we({ 'gateway.networking.k8s.io/gateway-name': 'wp' }) },
    ];
    for (const { objects, target } of cases) {
      const view = viewOf([...objects, target]);
      const sent = computeWorkloadWaypoint('ns1', workloadEntryLabels(target.object), view).waypoint;
      expect(workloadWaypointFacts(target.object, view).bound !== undefined).toBe(sent !== undefined);
    }
  });
});
