import { LaneCalls } from '../../../src/ca/service';

test('a call is alone only while no other call of its lane is past authentication; idle lanes keep no entry', () => {
  const lanes = new LaneCalls();
  expect(lanes.enter('node-a')).toBe(true);
  // A second call of node-a while the first runs: part of a burst.
  expect(lanes.enter('node-a')).toBe(false);
  // Another node is counted apart.
  expect(lanes.enter('node-b')).toBe(true);
  lanes.leave('node-a');
  lanes.leave('node-a');
  lanes.leave('node-b');
  // Both done: the next call of each is alone again.
  expect(lanes.enter('node-a')).toBe(true);
  lanes.leave('node-a');
  expect((lanes as unknown as { calls: Map<string, number> }).calls.size).toBe(0);
});
