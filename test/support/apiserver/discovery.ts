// Discovery documents (/api, /apis, /api/v1, /apis/<group>/<version>, /version).

import { SERVED_RESOURCES, type ServedResource } from './resources';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const SERVER_VERSION = {
  major: '1',
  minor: '34',
  gitVersion: 'v1.34.0-istiod-ts-test',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.24',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function apiVersions(): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
  };
}

export function groupList(installed: (r: ServedResource) => boolean): unknown {
  const groups = new Map<string, string[]>();
  for (const r of SERVED_RESOURCES) {
    if (r.group === '' || !installed(r)) continue;
    const versions = groups.get(r.group) ?? [];
    for (const v of r.versions) if (!versions.includes(v)) versions.push(v);
    groups.set(r.group, versions);
  }
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([name, versions]) => ({
      name,
      versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
      preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
    })),
  };
}

export function resourceList(group: string, version: string, installed: (r: ServedResource) => boolean): unknown {
  const resources = SERVED_RESOURCES.filter((r) => r.group === group && r.versions.includes(version) && installed(r));
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: resources.flatMap((r) => [
      {
        name: r.plural,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: r.createOnly ? ['create'] : VERBS,
      },
      ...r.subresources.map((s) => ({
        name: `${r.plural}/${s}`,
        singularName: '',
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['get', 'patch', 'update'],
      })),
    ]),
  };
}
