// The --watch rendering without a socket: names, removals by their last name, and the bounds.

import { encodeAddress } from '../../../src/ambient/codec';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import type { DeltaResponse } from '../../../src/cli/ads-client';
import { changedFields, DeltaNamer, MAX_CHANGED_FIELDS, MAX_DIFF_DEPTH } from '../../../src/cli/xds-delta';

function workload(uid: string, ip: number[], node: string): DeltaResponse['resources'][number] {
  const value = Buffer.from(
    encodeAddress({ workload: { uid, name: 'web', namespace: 'shop', addresses: [Buffer.from(ip)], node } }),
  );
  return { name: uid, version: node, aliases: [], resource: { type_url: ADDRESS_TYPE_URL, value } };
}

const delta = (resources: DeltaResponse['resources'], removed: string[] = []): DeltaResponse => ({
  type_url: ADDRESS_TYPE_URL,
  nonce: 'n',
  system_version_info: '',
  resources,
  removed_resources: removed,
});

test('a change lists the differing field paths; a removal prints the name last received', () => {
  const namer = new DeltaNamer();
  expect(namer.render(delta([workload('u1', [10, 0, 0, 9], 'node-a')]))).toContain(
    '+ added Workload shop/web [10.0.0.9] uid=u1',
  );
  expect(namer.render(delta([workload('u1', [10, 0, 0, 8], 'node-b')]))).toContain(
    '~ changed Workload shop/web [10.0.0.8] uid=u1 version=node-b fields=addresses,node',
  );
  expect(namer.render(delta([], ['u1']))).toContain('- removed Workload shop/web [10.0.0.8] uid=u1');
  expect(namer.render(delta([], ['u1']))).toContain('- removed u1 (not held before)');
});

test(`at most MAX_CHANGED_FIELDS (${MAX_CHANGED_FIELDS}) paths are listed, the rest counted`, () => {
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (let i = 0; i < MAX_CHANGED_FIELDS + 3; i++) after[`f${String(i).padStart(2, '0')}`] = i;
  const r = changedFields(before, after);
  expect(r.paths).toHaveLength(MAX_CHANGED_FIELDS);
  expect(r.total).toBe(MAX_CHANGED_FIELDS + 3);
});

test(`objects nested deeper than MAX_DIFF_DEPTH (${MAX_DIFF_DEPTH}) differ at the parent path`, () => {
  const nest = (leaf: unknown, depth: number): Record<string, unknown> =>
    depth === 0 ? { leaf } : { n: nest(leaf, depth - 1) };
  const r = changedFields(nest(1, MAX_DIFF_DEPTH + 2), nest(2, MAX_DIFF_DEPTH + 2));
  expect(r.paths).toEqual([Array(MAX_DIFF_DEPTH).fill('n').join('.')]);
});
