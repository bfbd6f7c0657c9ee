import { parseGoBool } from '../../../src/config/bool';
import { parseServeOptions } from '../../../src/config/options';

describe("booleans are read as Go's strconv.ParseBool reads them", () => {
  test.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('%s is true', (text) => expect(parseGoBool(text)).toBe(true));
  test.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('%s is false', (text) => expect(parseGoBool(text)).toBe(false));
  test.each(['', 'tRUE', 'yes', 'on', ' true', '2'])('%j is not a boolean', (text) =>
    expect(parseGoBool(text)).toBeUndefined(),
  );

  test('an env var takes the same spellings, trimmed, and empty is false', () => {
    expect(parseServeOptions([], { XDS_AUTH: ' False ' }).env.XDS_AUTH).toBe(false);
    expect(parseServeOptions([], { XDS_AUTH: '' }).env.XDS_AUTH).toBe(false);
    expect(() => parseServeOptions([], { XDS_AUTH: 'tRUE' })).toThrow('env XDS_AUTH: "tRUE" is not a boolean');
  });
});
