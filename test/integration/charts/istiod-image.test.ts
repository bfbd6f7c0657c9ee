// The image of charts/istiod comes from its own hub/tag/image values only. A values file shared
// with Istio's ztunnel and istio-cni charts sets global.hub and global.tag to Istio's registry,
// which publishes no istiod-ts image; taking them would render an image that does not exist.
// The install NOTES say so whenever they are set and not what the image uses.

import { helmInstallNotes, helmTemplate } from '../../support/helm';
import { deploymentOf } from './istiod-objects';

const NS = 'istio-system';
const APP_VERSION = '0.1.0';
const SHARED = { global: { hub: 'docker.io/istio', tag: '1.28.0' } };
const image = (values: Record<string, unknown>) => deploymentOf(helmTemplate('istiod', { namespace: NS, values })).container.image;
const notes = (values: Record<string, unknown>) => helmInstallNotes('istiod', { namespace: NS, values });

describe('charts/istiod image with a values file shared with Istio’s charts', () => {
  test('global.hub and global.tag do not change the image', () => {
    expect(image(SHARED)).toBe(`istiod-ts/istiod-ts:${APP_VERSION}`);
    expect(image({ ...SHARED, hub: 'registry.example/mesh', tag: '1.2.3' })).toBe('registry.example/mesh/istiod-ts:1.2.3');
    expect(image({ ...SHARED, pilot: { image: 'registry.example/x/istiod:9' } })).toBe('registry.example/x/istiod:9');
  });

  test('the install NOTES warn, naming both values and the image used', () => {
    const text = notes(SHARED);
    expect(text).toMatch(/WARNING: global.hub="docker.io\/istio" and global.tag="1.28.0" are not used for the istiod-ts image/);
    expect(text).toContain(`This release runs istiod-ts/istiod-ts:${APP_VERSION}`);
  });

  test('no warning without them, or when they are what the image uses anyway', () => {
    expect(notes({})).not.toMatch(/WARNING/);
    expect(notes({})).toContain(`Image: istiod-ts/istiod-ts:${APP_VERSION}`);
    expect(notes({ hub: 'registry.example/mesh', tag: '1.2.3', global: { hub: 'registry.example/mesh', tag: '1.2.3' } })).not.toMatch(/WARNING/);
  });

  test('a full image path with either set still warns: neither is used', () => {
    expect(notes({ image: 'registry.example/x/istiod:9', global: { hub: 'istiod-ts' } })).toMatch(/WARNING: global.hub="istiod-ts"/);
  });
});
