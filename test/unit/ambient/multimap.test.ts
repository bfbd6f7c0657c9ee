import { MULTIMAP_ARRAY_LIMIT, Multimap } from '../../../src/ambient/multimap';

describe('Multimap', () => {
  test('names come back in insertion order whether a key holds one, a few or many', () => {
    const m = new Multimap();
    const all = Array.from({ length: MULTIMAP_ARRAY_LIMIT * 2 + 1 }, (_, i) => `n${i}`);
    const expected: string[] = [];
    for (const name of all) {
      m.add('k', name);
      m.add('k', name); // a second add is a no-op
      expected.push(name);
      expect(m.get('k')).toEqual(expected);
    }
    // Removing from the middle keeps the order of the rest.
    for (const name of [...all.slice(3), ...all.slice(0, 3)]) {
      m.delete('k', name);
      m.delete('k', name);
      expected.splice(expected.indexOf(name), 1);
      expect(m.get('k')).toEqual(expected);
    }
    expect(m.get('k')).toEqual([]);
    m.add('k', 'a');
    m.add('k', 'b');
    m.add('k', 'c');
    m.delete('k', 'b');
    expect(m.get('k')).toEqual(['a', 'c']);
    m.delete('k', 'a');
    expect(m.get('k')).toEqual(['c']);
    m.delete('k', 'missing');
    expect(m.get('k')).toEqual(['c']);
    expect(m.get('other')).toEqual([]);
  });
});
