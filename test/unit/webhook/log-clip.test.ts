import { clipForLog, MAX_LOGGED_MESSAGE_CHARS } from '../../../src/webhook/server';

describe('webhook log lines', () => {
  test(`a denial message up to MAX_LOGGED_MESSAGE_CHARS (${MAX_LOGGED_MESSAGE_CHARS}) is logged whole`, () => {
    const m = 'x'.repeat(MAX_LOGGED_MESSAGE_CHARS);
    expect(clipForLog(m)).toBe(m);
  });

  test('a longer one is clipped and says how much was left out', () => {
    const m = 'y'.repeat(MAX_LOGGED_MESSAGE_CHARS + 600_000);
    const clipped = clipForLog(m);
    expect(clipped.startsWith('y'.repeat(MAX_LOGGED_MESSAGE_CHARS))).toBe(true);
    expect(clipped).toMatch(/\.\.\. \(600000 more characters\)$/);
    expect(clipped.length).toBeLessThan(MAX_LOGGED_MESSAGE_CHARS + 40);
  });
});
