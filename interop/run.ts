// `npm run interop`: istiod-ts judged by real peers it is given as binaries (upstream ztunnel and
// istioctl; docs/interop.md says how to point it at them). Subcommands:
//   (none) | all                 parts 1 and 2; needs ZTUNNEL_BIN and ISTIOCTL_BIN
//   ztunnel | istioctl           one part
//   fixture NAME DIR             lay a goldens fixture's manifests into DIR (for istiod's recorder)
//   adopt-golden NAME FILE       turn the recorder's output for fixture NAME into test/golden/istiod/NAME.json
//   mc-fixture NAME DIR          lay a multicluster fixture out under DIR (one folder per cluster, mesh.yaml)
//                                and print the recorder's -clusters and -mesh arguments and the digest
//   adopt-mc-golden NAME FILE    the same as adopt-golden, into test/golden/istiod-multicluster/NAME.json
//   mesh DIR [--workloads N] [--nodes N] [--namespaces N]   write a generated mesh

import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import {
  fixtureNamed,
  materialize,
  materializeMulticluster,
  multiclusterFixtureNamed,
  recorderClustersArg,
} from './fixtures';
import { adoptGolden, adoptMulticlusterGolden } from './golden-file';
import { DEFAULT_MESH, generateMesh } from './mesh/generate';
import { folderDigest, writeMesh } from './mesh/write';
import { runParts } from './parts';

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  const [command = 'all', ...rest] = argv;
  switch (command) {
    case 'fixture': {
      const [name, dir] = rest;
      if (!name || !dir) throw new Error('usage: fixture NAME DIR');
      console.log(`${dir} ${materialize(fixtureNamed(name), dir)}`);
      return 0;
    }
    case 'adopt-golden': {
      const [name, file] = rest;
      if (!name || !file) throw new Error('usage: adopt-golden NAME FILE');
      const scratch = mkdtempSync(path.join(tmpdir(), 'adopt-'));
      try {
        const fixture = fixtureNamed(name);
        console.log(adoptGolden(file, name, materialize(fixture, scratch), fixture.env));
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
      return 0;
    }
    case 'mc-fixture': {
      const [name, dir] = rest;
      if (!name || !dir) throw new Error('usage: mc-fixture NAME DIR');
      const fixture = multiclusterFixtureNamed(name);
      const layout = materializeMulticluster(fixture, dir);
      console.log(`-clusters ${recorderClustersArg(layout)}`);
      console.log(`-mesh ${layout.meshConfigFile}`);
      console.log(
        `env ${Object.entries(fixture.env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
      console.log(`digest ${layout.digest}`);
      return 0;
    }
    case 'adopt-mc-golden': {
      const [name, file] = rest;
      if (!name || !file) throw new Error('usage: adopt-mc-golden NAME FILE');
      const scratch = mkdtempSync(path.join(tmpdir(), 'adopt-mc-'));
      try {
        const fixture = multiclusterFixtureNamed(name);
        const layout = materializeMulticluster(fixture, scratch);
        console.log(adoptMulticlusterGolden(file, name, layout.digest, fixture.env, layout.folders));
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
      return 0;
    }
    case 'mesh': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { workloads: { type: 'string' }, nodes: { type: 'string' }, namespaces: { type: 'string' } },
      });
      const dir = positionals[0];
      if (!dir) throw new Error('usage: mesh DIR [--workloads N] [--nodes N] [--namespaces N]');
      writeMesh(
        dir,
        generateMesh({
          workloads: positiveInt('workloads', values.workloads, DEFAULT_MESH.workloads),
          nodes: positiveInt('nodes', values.nodes, DEFAULT_MESH.nodes),
          namespaces: positiveInt('namespaces', values.namespaces, DEFAULT_MESH.namespaces),
        }),
      );
      console.log(`${dir} ${folderDigest(dir)}`);
      return 0;
    }
    case 'all':
    case 'ztunnel':
    case 'istioctl':
      return runParts(command === 'all' ? ['ztunnel', 'istioctl'] : [command], rest);
    default:
      throw new Error(`unknown subcommand ${command}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`interop: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
