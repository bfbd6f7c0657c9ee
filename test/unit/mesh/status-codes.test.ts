// Status-code tables written as ranges read like the tables they copy (Envoy's StatusCode enum, Go's
// named codes); the reader must expand them exactly and refuse a typo rather than drop a code.

import { statusCodes } from '../../../src/mesh/validate-common';

describe('statusCodes', () => {
  it('expands single codes and inclusive ranges', () => {
    expect([...statusCodes('100 200-203 226')]).toEqual([100, 200, 201, 202, 203, 226]);
  });

  it('refuses a part that is not a code or a range', () => {
    expect(() => statusCodes('100 2xx')).toThrow('bad status code range "2xx"');
    expect(() => statusCodes('100-')).toThrow('bad status code range "100-"');
  });
});
