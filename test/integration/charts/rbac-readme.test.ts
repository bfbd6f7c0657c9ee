// charts/istiod/README.md's RBAC table is what the chart renders: one row per rule, rows marked
// "with `taint.enabled`" only in that rendering. rbac.test.ts proves the rules against the code;
// this keeps the table operators read in step with them.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHARTS_DIR, helmTemplate } from '../../support/helm';
import { rulesOf, type PolicyRule } from './istiod-objects';

const README = path.join(CHARTS_DIR, 'istiod', 'README.md');
const TABLE_HEADING = '## RBAC: exactly the calls the code makes, updates by name';
const HEADER = '| object | API group | resources | verbs | resourceNames | why, and the code |';
/** The mark of a row that only a rendering with these values has. */
const MARKS = { taint: ', with `taint.enabled`' } as const;
type Mark = keyof typeof MARKS;

interface Row {
  kind: 'ClusterRole' | 'Role';
  only: Mark | undefined;
  rule: PolicyRule;
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The table's rows, parsed; throws naming a row it cannot read. */
function readmeRows(): Row[] {
  const text = fs.readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf(TABLE_HEADING));
  const lines = section.split('\n');
  const start = lines.indexOf(HEADER);
  if (start < 0) throw new Error(`${README}: no RBAC table with header ${HEADER}`);
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [object, group, resources, verbs, names] = line.split(' | ').map((c) => c.replace(/^\| /, ''));
    const only = (Object.keys(MARKS) as Mark[]).find((m) => object!.endsWith(MARKS[m]));
    const kind = only ? object!.slice(0, -MARKS[only].length) : object!;
    if (kind !== 'ClusterRole' && kind !== 'Role') throw new Error(`unreadable object cell in: ${line}`);
    const rule: PolicyRule = {
      apiGroups: [group === 'core' ? '' : codeSpans(group!)[0]!],
      resources: codeSpans(resources!),
      verbs: verbs!.split(', '),
      ...(names === 'any' ? {} : { resourceNames: codeSpans(names!) }),
    };
    rows.push({ kind, only, rule });
  }
  return rows;
}

/** A rule as comparable text, independent of the order of its lists. */
const canonical = (r: PolicyRule) =>
  JSON.stringify({ g: [...r.apiGroups].sort(), r: [...r.resources].sort(), v: [...r.verbs].sort(), n: [...(r.resourceNames ?? [])].sort() });

describe('charts/istiod/README.md RBAC table', () => {
  const rows = readmeRows();

  test.each<[string, Record<string, unknown>, Mark | undefined]>([
    ['the default rendering', {}, undefined],
    ['the rendering with taint.enabled', { taint: { enabled: true } }, 'taint'],
    // A primary reads remote secrets whether or not it names its cluster: no rule depends on it.
    ['the rendering of a primary that names its cluster', { global: { multiCluster: { clusterName: 'cluster-1' } } }, undefined],
  ])('lists exactly the rules of %s', (_name, values, mark) => {
    const objects = helmTemplate('istiod', { namespace: 'istio-system', values });
    for (const kind of ['ClusterRole', 'Role'] as const) {
      const documented = rows.filter((r) => r.kind === kind && (r.only === undefined || r.only === mark)).map((r) => canonical(r.rule)).sort();
      const rendered = rulesOf(objects, kind).map(canonical).sort();
      expect({ kind, rules: documented }).toEqual({ kind, rules: rendered });
    }
  });

  test('marks every taint-only row, and has rows of both kinds', () => {
    expect(rows.filter((r) => r.only === 'taint').map((r) => r.kind).sort()).toEqual(['ClusterRole', 'Role']);
    expect(rows.filter((r) => r.only === undefined).length).toBeGreaterThan(10);
  });
});
