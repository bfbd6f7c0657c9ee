// A syntax check for CEL filter expressions (Telemetry access-log filters). istiod parses them
// with cel-go; we check what most broken expressions get wrong: emptiness, unterminated strings,
// unbalanced brackets and a dangling operator. It accepts some expressions cel-go would reject.

const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
const DANGLING = /(&&|\|\||==|!=|<=|>=|[<>+\-*/%!?:.,])\s*$/;
const LEADING = /^\s*(&&|\|\||==|!=|<=|>=|[<>*/%?:.,])/;

export function celSyntaxError(expression: string): string | undefined {
  if (expression.trim() === '') return 'must be a valid CEL expression, the expression is empty';
  const stack: string[] = [];
  let i = 0;
  while (i < expression.length) {
    const c = expression.charAt(i);
    if (c === '"' || c === "'") {
      const triple = expression.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      let j = i + quote.length;
      for (;;) {
        if (j >= expression.length) return `must be a valid CEL expression, unterminated string starting at ${i}`;
        if (expression[j] === '\\') j += 2;
        else if (expression.startsWith(quote, j)) break;
        else if (!triple && expression[j] === '\n')
          return `must be a valid CEL expression, unterminated string starting at ${i}`;
        else j++;
      }
      i = j + quote.length;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c in CLOSERS) {
      if (stack.pop() !== CLOSERS[c]) return `must be a valid CEL expression, unbalanced '${c}' at ${i}`;
    }
    i++;
  }
  if (stack.length > 0) return `must be a valid CEL expression, unclosed '${stack[stack.length - 1]}'`;
  if (DANGLING.test(expression) || LEADING.test(expression))
    return 'must be a valid CEL expression, an operator is missing an operand';
  return undefined;
}
