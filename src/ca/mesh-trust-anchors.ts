// meshConfig caCertificates: extra trust anchors an operator adds to the trust bundle the CA serves
// (every istio-ca-root-cert ConfigMap and the roots at the end of each CreateCertificate chain),
// as istiod adds them to its trust bundle. Only `pem` entries carry certificates here;
// spiffeBundleUrl entries are fetched by istiod's trust bundle, not by istiod-ts, and
// certSigners/trustDomains scope an anchor for proxies, which the bundle itself cannot express.

import * as crypto from 'node:crypto';
import type { MeshConfig } from '../mesh/types';
import { splitPemCertificates } from './key-material';

/**
 * Entries of caCertificates read. The bundle lands in a ConfigMap (1 MiB) and at the end of every
 * issued chain, so an unbounded list would break both long before it helped anyone.
 */
export const MAX_MESH_CA_CERTIFICATES = 64;

/**
 * The certificates of every `pem` entry, one PEM each, in order. Throws an error naming the entry
 * (caCertificates[i].pem) when one is not a PEM certificate, or is not a CA.
 */
export function meshTrustAnchors(mesh: Pick<MeshConfig, 'caCertificates'>): string[] {
  const entries = mesh.caCertificates ?? [];
  if (entries.length > MAX_MESH_CA_CERTIFICATES)
    throw new Error(
      `meshConfig caCertificates has ${entries.length} entries; at most ${MAX_MESH_CA_CERTIFICATES} are read`,
    );
  const anchors: string[] = [];
  entries.forEach((entry, i) => {
    const pem = entry.pem;
    if (pem === undefined || pem.trim() === '') return;
    const where = `meshConfig caCertificates[${i}].pem`;
    const blocks = splitPemCertificates(pem);
    if (blocks.length === 0) throw new Error(`${where} holds no PEM CERTIFICATE block`);
    blocks.forEach((block, j) => {
      let cert: crypto.X509Certificate;
      try {
        cert = new crypto.X509Certificate(block);
      } catch (err) {
        throw new Error(`${where}: certificate ${j + 1} cannot be parsed: ${(err as Error).message}`);
      }
      if (!cert.ca) throw new Error(`${where}: certificate ${j + 1} (${cert.subject}) is not a CA certificate`);
      anchors.push(block);
    });
  });
  return anchors;
}
