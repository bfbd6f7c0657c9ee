import { logs, parseLogLevels, scopedLogger } from '../../../src/log/logger';
import { captureLogs } from '../../support/logs';

describe('log levels', () => {
  it('parses istiod-style scope:level lists', () => {
    expect([...parseLogLevels('default:info,ca:debug')]).toEqual([
      ['default', 'info'],
      ['ca', 'debug'],
    ]);
  });

  it('a bare level applies to the default scope; istiod spellings are accepted', () => {
    expect([...parseLogLevels('warning')]).toEqual([['default', 'warn']]);
    expect(parseLogLevels('xds:none').get('xds')).toBe('silent');
  });

  it('an unknown level is an error naming it', () => {
    expect(() => parseLogLevels('ca:loud')).toThrow('unknown log level "loud"');
  });
});

describe('scoped loggers', () => {
  it('every line is JSON with its scope, and each scope has its own level', () => {
    const sink = captureLogs();
    logs.configure('default:info,test-ca:debug');
    scopedLogger('test-ca').debug('ca detail');
    scopedLogger('test-xds').debug('xds detail');
    scopedLogger('test-xds').info({ node: 'n1' }, 'xds news');
    const lines = sink.lines();
    expect(lines.map((l) => [l['scope'], l['msg']])).toEqual([
      ['test-ca', 'ca detail'],
      ['test-xds', 'xds news'],
    ]);
    expect(lines[1]).toMatchObject({ level: 'info', node: 'n1' });
  });

  it('a level changed at runtime takes effect at once on existing loggers', () => {
    const sink = captureLogs();
    logs.configure('default:info');
    const log = scopedLogger('test-runtime');
    log.debug('hidden');
    logs.setLevel('test-runtime', 'debug');
    log.debug('shown');
    expect(sink.lines().map((l) => l['msg'])).toEqual(['shown']);
    expect(logs.levels()['test-runtime']).toBe('debug');
  });
});
