// Envoy matches regexes with RE2 and istiod checks them with Go's regexp (the same syntax), so we
// compile them with re2js, a JavaScript port of that parser: what it refuses, istiod refuses,
// with the same messages. RE2 needs time linear in the pattern to parse; compiling expands
// counted repeats, so the expanded size is bounded before anything is compiled.

import { RE2JS } from 're2js';

/**
 * Longest regex, in UTF-8 bytes (Go's len), that istiod accepts: it stands in for Envoy's RE2
 * program size limit, which is always larger than the length.
 */
export const MAX_REGEX_LENGTH = 1024;

/**
 * Largest RE2 program, in instructions with counted repeats expanded, that is compiled here. It is
 * the `re2.max_program_size.error_level` istiod writes into every Envoy bootstrap, so a larger
 * regex would be refused by Envoy anyway; without it one 1 KiB pattern such as `a{1000}` repeated
 * 146 times takes a few hundred milliseconds of the event loop to compile.
 */
export const MAX_REGEX_PROGRAM_SIZE = 32768;

/**
 * Most RE2 instructions (as counted for MAX_REGEX_PROGRAM_SIZE) that the regexes of one object may
 * need together: eight regexes at the per-regex limit, about half a second of compiling here,
 * where a real VirtualService with hundreds of routes needs a few thousand. Without it one object
 * under the API server's size limit could hold thousands of 1 KiB regexes and take minutes.
 */
export const MAX_OBJECT_REGEX_PROGRAM_SIZE = 262144;

/** Instructions spent so far by each validation (keyed by its Report, or whatever the caller passes). */
const spentByOwner = new WeakMap<object, number>();

const RE2_STYLE = '; Istio uses RE2 style regex-based match (https://github.com/google/re2/wiki/Syntax)';

/** Why a refused regex is refused, for the two Perl features people most often reach for. */
const HINTS: readonly [RegExp, string][] = [
  [/\(\?<?[=!]/, 'lookaround assertions are not supported'],
  [/\\[1-9]|\\k<|\(\?P=/, 'backreferences are not supported'],
];

/**
 * A lower bound of the RE2 program size: one instruction per literal, class, alternation and
 * quantifier, groups counted whole, and `{n,m}` repeating what precedes it m (or n + 1) times.
 * One pass over the pattern; syntax errors are left to the RE2 parser.
 */
export function regexProgramSize(re: string): number {
  const root = { total: 0, last: 0 };
  // Groups opened and not yet closed, innermost last; `top` is the innermost, or the root.
  const open: (typeof root)[] = [];
  let top = root;
  const atom = (size: number): void => {
    top.total += size;
    top.last = size;
  };
  let i = 0;
  while (i < re.length) {
    const c = re.charAt(i);
    if (c === '\\') {
      const next = re[i + 1];
      if (next === 'Q') {
        const end = re.indexOf('\\E', i + 2);
        const stop = end < 0 ? re.length : end;
        for (let k = i + 2; k < stop; k++) atom(1);
        i = end < 0 ? re.length : end + 2;
        continue;
      }
      const braced = (next === 'p' || next === 'P' || next === 'x') && re[i + 2] === '{' ? re.indexOf('}', i + 3) : -1;
      i = braced >= 0 ? braced + 1 : i + (next === 'p' || next === 'P' ? 3 : next === 'x' ? 4 : 2);
      atom(1);
    } else if (c === '[') {
      let k = i + 1;
      if (re[k] === '^') k++;
      if (re[k] === ']') k++;
      while (k < re.length && re[k] !== ']') {
        if (re[k] === '\\') k += 2;
        else if (re.startsWith('[:', k)) {
          const end = re.indexOf(':]', k + 2);
          k = end < 0 ? k + 1 : end + 2;
        } else k++;
      }
      i = k + 1;
      atom(1);
    } else if (c === '(') {
      // Flag-only groups such as (?i) are not groups; (?flags:...), (?P<n>...) and (...) are.
      const flags = /^\(\?[imsU-]*\)/.exec(re.slice(i, i + 8));
      if (flags) {
        i += flags[0].length;
        continue;
      }
      top = { total: 0, last: 0 };
      open.push(top);
      // The group's own syntax, (?P<name>, (?<name> or (?flags:, is not part of the program.
      const opener = /^\(\?(?:P?<[^>]*>|[imsU-]*:)/.exec(re.slice(i, i + MAX_REGEX_LENGTH));
      i += opener ? opener[0].length : 1;
    } else if (c === ')') {
      const inner = open.pop();
      if (inner) {
        top = open.at(-1) ?? root;
        atom(inner.total + 2);
      }
      i++;
    } else if (c === '|') {
      top.total += 1;
      top.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      top.total += 1;
      i += re[i + 1] === '?' ? 2 : 1;
    } else if (c === '{') {
      const m = /^\{(\d{1,7})(,(\d{0,7}))?\}/.exec(re.slice(i, i + 17));
      if (!m) {
        atom(1);
        i++;
        continue;
      }
      const min = Number(m[1]);
      const count = m[2] === undefined ? min : m[3] === '' ? min + 1 : Number(m[3]);
      top.total += top.last * (count - 1);
      top.last *= count;
      i += m[0].length + (re[i + m[0].length] === '?' ? 1 : 0);
    } else {
      atom(1);
      i++;
    }
  }
  for (let inner = open.pop(); inner; inner = open.pop()) (open.at(-1) ?? root).total += inner.total;
  return root.total;
}

/**
 * Returns why `re` is not a valid RE2 expression (istiod's message, without the field), or
 * undefined. `owner` (the validation's Report) shares MAX_OBJECT_REGEX_PROGRAM_SIZE among the
 * regexes of one object.
 */
export function re2Error(re: string, owner?: object): string | undefined {
  if (Buffer.byteLength(re, 'utf8') > MAX_REGEX_LENGTH)
    return `regex is too large, max length allowed is ${MAX_REGEX_LENGTH}`;
  const size = regexProgramSize(re);
  if (size > MAX_REGEX_PROGRAM_SIZE) {
    return `regex program is too large: at least ${size} instructions, more than ${MAX_REGEX_PROGRAM_SIZE} (the largest Envoy accepts as istiod configures it)`;
  }
  if (owner) {
    const spent = (spentByOwner.get(owner) ?? 0) + size;
    if (spent > MAX_OBJECT_REGEX_PROGRAM_SIZE) {
      return `the regexes of this object need more than ${MAX_OBJECT_REGEX_PROGRAM_SIZE} RE2 instructions together, the most one object may use`;
    }
    spentByOwner.set(owner, spent);
  }
  try {
    RE2JS.compile(re);
    return undefined;
  } catch (e) {
    const hint = HINTS.find(([pattern]) => pattern.test(re));
    return `${(e as Error).message}${hint ? `; ${hint[1]}` : ''}${RE2_STYLE}`;
  }
}
