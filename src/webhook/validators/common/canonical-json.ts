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
      // Last key first, so the first pops first.
      const keys = Object.keys(v).sort().reverse();
      pending.push({ text: '}' });
      keys.forEach((key, i) => {
        pending.push({ value: v[key] });
        pending.push({ text: `${i < keys.length - 1 ? ',' : ''}${JSON.stringify(key)}:` });
      });
      pending.push({ text: '{' });
    } else {
      // undefined (and anything else JSON has no form for) stringifies to undefined, whatever the lib types say.
      const text = JSON.stringify(v) as string | undefined;
      out.push(text ?? 'null');
    }
  }
  return out.join('');
}
