// JSON with object keys sorted at every level, so equal values compare equal whatever order
// their keys were written in. Written with its own stack rather than recursion: it runs over
// parts of user objects that may hold unknown fields nested thousands of levels deep.

import { isObject } from './fields';

type Work = { text: string } | { value: unknown };

export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Items are pushed in reverse so that they pop in the order they are written.
  const pending: Work[] = [{ value }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const v = item.value;
    if (Array.isArray(v)) {
      pending.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        pending.push({ value: v[i] });
        if (i > 0) pending.push({ text: ',' });
      }
      pending.push({ text: '[' });
    } else if (isObject(v)) {
      const keys = Object.keys(v).sort();
      pending.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        pending.push({ value: v[keys[i]!] });
        pending.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
      }
      pending.push({ text: '{' });
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  }
  return out.join('');
}
