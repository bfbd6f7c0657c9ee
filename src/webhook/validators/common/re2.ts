// Envoy matches regexes with RE2, so istiod compiles them with Go's RE2-compatible regexp. We
// check the same syntax with JavaScript's engine after translating RE2-only spellings, and
// reject what RE2 does not support (lookaround, backreferences).

export const MAX_REGEX_LENGTH = 1024;

const RE2_UNSUPPORTED: readonly [RegExp, string][] = [
  [/\(\?<?[=!]/, 'lookaround assertions are not supported'],
  [/\\[1-9]/, 'backreferences are not supported'],
  [/\\k</, 'named backreferences are not supported'],
];

/** Returns why `re` is not a valid RE2 expression, or undefined. */
export function re2Error(re: string): string | undefined {
  if (re.length > MAX_REGEX_LENGTH) return `regex is too large, max length allowed is ${MAX_REGEX_LENGTH}`;
  for (const [pattern, reason] of RE2_UNSUPPORTED) if (pattern.test(re)) return `invalid regex: ${reason}`;
  let flags = '';
  let body = re.replace(/\(\?P</g, '(?<');
  // Leading flag groups such as (?i) or (?is) become JavaScript flags; inline (?i:...) groups
  // become plain groups (the match semantics do not matter for a syntax check).
  const lead = /^\(\?([imsU]+)\)/.exec(body);
  if (lead) {
    flags = [...new Set(lead[1]!.replace('U', '').split(''))].join('');
    body = body.slice(lead[0].length);
  }
  body = body.replace(/\(\?[imsU]+:/g, '(?:').replace(/\(\?[imsU]+\)/g, '');
  body = body.replace(/\\[zAQE]/g, '').replace(/\[\[:(\w+):\]\]/g, '[a-z]').replace(/\[:(\w+):\]/g, 'a-z');
  try {
    new RegExp(body, flags);
    return undefined;
  } catch (e) {
    return `${(e as Error).message.replace(/^Invalid regular expression: /, '')}; Istio uses RE2 style regex-based match (https://github.com/google/re2/wiki/Syntax)`;
  }
}
