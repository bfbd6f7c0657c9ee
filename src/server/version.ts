// Build information for /version and `istiod-ts version`.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface VersionInfo {
  name: string;
  version: string;
  node: string;
  platform: string;
}

function findPackageJson(start: string): string | undefined {
  // Sources run from src/ under jest and from dist/src/ when built: walk up to the package root.
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

let cached: VersionInfo | undefined;

export function versionInfo(): VersionInfo {
  if (!cached) {
    const file = findPackageJson(__dirname);
    const pkg = file ? (JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string }) : {};
    cached = {
      name: pkg.name ?? 'istiod-ts',
      version: pkg.version ?? 'unknown',
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
    };
  }
  return cached;
}
