// --log_as_json=false: istiod's console layout, built from the JSON line so both carry the same facts.

import { jsonLineToText } from '../../../src/log/text-format';

describe("istiod's text log layout", () => {
  it('puts time (microseconds), level, scope and message in tab-separated columns', () => {
    const line = '{"level":"info","time":"2026-12-03T07:55:39.328Z","pid":7,"scope":"ads","msg":"new connection"}\n';
    expect(jsonLineToText(line)).toBe('2026-12-03T07:55:39.328000Z\tinfo\tads\tnew connection\n');
  });

  it('writes the remaining fields as key=value, quoting values with spaces, and errors by their message', () => {
    const line = JSON.stringify({
      level: 'warn',
      time: '2026-12-03T07:55:39.328Z',
      pid: 7,
      scope: 'ca',
      msg: 'denied',
      node: 'n1',
      reason: 'not on this node',
      count: 3,
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' },
    });
    expect(jsonLineToText(line)).toBe(
      '2026-12-03T07:55:39.328000Z\twarning\tca\tdenied\tnode=n1 reason="not on this node" count=3 err="boom"\n',
    );
  });

  it('passes a line that is not JSON through unchanged', () => {
    expect(jsonLineToText('plain text')).toBe('plain text\n');
  });
});
