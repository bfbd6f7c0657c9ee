// meshConfig caCertificates: trust anchors istiod hands to sidecars, and only with
// ISTIO_MULTIROOT_MESH, over PCDS. Its CreateCertificate answers and its istio-ca-root-cert
// ConfigMaps carry the CA's own roots alone, and ztunnel takes the roots it trusts for peers from
// the end of its certificate chain, so an anchor added for another purpose never becomes a root
// ztunnel accepts a peer identity from. istiod-ts serves no sidecars, so it serves the anchors to
// no one; it checks them and tells the operator so.

import * as crypto from 'node:crypto';
import type { MeshConfig } from '../../mesh/types';
import { splitPemCertificates } from '../signing/key-material';

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

export interface AnchorsNotice {
  fields: Record<string, unknown>;
  message: string;
}

/**
 * What to tell an operator who set caCertificates: that they are not served, or why an entry is
 * wrong (so a mistake is not found only after moving to istiod). Undefined when none are set.
 */
export function meshTrustAnchorsNotice(mesh: Pick<MeshConfig, 'caCertificates'>): AnchorsNotice | undefined {
  if ((mesh.caCertificates ?? []).length === 0) return undefined;
  const served =
    'not served: istiod hands them only to sidecars over PCDS (with ISTIO_MULTIROOT_MESH), and ztunnel trusts the CA roots at the end of its certificate chain alone (docs/compat.md)';
  try {
    const anchors = meshTrustAnchors(mesh);
    return { fields: { certificates: anchors.length }, message: `meshConfig caCertificates are ${served}` };
  } catch (err) {
    return { fields: { err: (err as Error).message }, message: `meshConfig caCertificates are invalid and ${served}` };
  }
}
