import { CloseDeadline } from '../../../src/net/close-deadline';

describe('CloseDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('the earliest deadline asked for wins; a later one does not postpone it', () => {
    const force = jest.fn();
    const d = new CloseDeadline(force);
    d.shorten(1000);
    d.shorten(5000);
    jest.advanceTimersByTime(999);
    expect(force).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(force).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(10_000);
    expect(force).toHaveBeenCalledTimes(1);
  });

  test('a shorter deadline replaces a longer one', () => {
    const force = jest.fn();
    const d = new CloseDeadline(force);
    d.shorten(10_000);
    d.shorten(300);
    jest.advanceTimersByTime(300);
    expect(force).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(10_000);
    expect(force).toHaveBeenCalledTimes(1);
  });

  test('a close that finished on its own forces nothing', () => {
    const force = jest.fn();
    const d = new CloseDeadline(force);
    d.shorten(100);
    d.cancel();
    jest.advanceTimersByTime(1000);
    expect(force).not.toHaveBeenCalled();
  });
});
