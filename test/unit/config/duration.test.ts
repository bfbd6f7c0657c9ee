import { parseDuration } from '../../../src/config/duration';
import { parseListenAddress } from '../../../src/config/address';

describe('Go durations', () => {
  it.each([
    ['100ms', 100],
    ['10s', 10_000],
    ['1h30m', 5_400_000],
    ['87600h', 87_600 * 3_600_000],
    ['1.5s', 1500],
    ['0', 0],
    ['-2m', -120_000],
    ['500us', 0.5],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '10', '1d', 'abc', '1h foo'])('"%s" is rejected with the expected form', (text) => {
    expect(() => parseDuration(text)).toThrow(/duration/);
  });
});

describe('listen addresses', () => {
  it.each([
    [':15010', { host: '', port: 15010 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['localhost:15014', { host: 'localhost', port: 15014 }],
  ])('%s parses', (text, addr) => expect(parseListenAddress(text)).toEqual(addr));

  it('empty means disabled', () => expect(parseListenAddress('')).toBeNull());

  it.each(['15010', '::1:80', '[::1]80', 'host:'])('"%s" is rejected', (text) => {
    expect(() => parseListenAddress(text)).toThrow(/invalid address/);
  });
});
