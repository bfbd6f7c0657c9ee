import { bindErrorCode, ListenError } from '../../../src/net/listen-error';

describe('ListenError', () => {
  test('the errno code comes from Node errors, or from the message grpc-js folds it into', () => {
    expect(bindErrorCode(Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' }))).toBe('EADDRINUSE');
    expect(
      bindErrorCode(
        new Error('No address added out of total 1 resolved errors: [listen EACCES: permission denied 0.0.0.0:80]'),
      ),
    ).toBe('EACCES');
    expect(bindErrorCode(new Error('something else'))).toBeUndefined();
  });

  test('known codes read as words; others keep the detail', () => {
    expect(new ListenError('webhook', '127.0.0.1:15017', 'EADDRINUSE', 'listen EADDRINUSE ...').message).toBe(
      '127.0.0.1:15017: address already in use',
    );
    expect(new ListenError('http', '[::]:8080', undefined, 'odd failure').message).toBe('[::]:8080: odd failure');
  });
});
