// The parts `npm run interop` runs, with the binaries they are given: ZTUNNEL_BIN for part 1,
// ISTIOCTL_BIN for part 2 (which also needs ZTUNNEL_BIN: istioctl reads a connected ztunnel).
// Without them it names what is missing and exits 1; it never builds a peer.

import { accessSync, constants, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { KubeControlPlane, LocalControlPlane, type ControlPlane } from './control-plane';
import { REPO_ROOT } from '../test/support/cli';
import { freePorts } from './istiod-ts';
import { DEFAULT_MESH, generateMesh } from './mesh/generate';
import { writeMesh } from './mesh/write';
import { istioctlPart } from './part-istioctl';
import { ZtunnelScenario, type ScenarioOptions } from './part-ztunnel';
import { Report } from './report';
import type { ZtunnelPod } from './ztunnel';

export type PartName = 'ztunnel' | 'istioctl';

const NEEDS: Record<PartName, string[]> = { ztunnel: ['ZTUNNEL_BIN'], istioctl: ['ISTIOCTL_BIN', 'ZTUNNEL_BIN'] };

function executable(name: string): string | string[] {
  const file = process.env[name];
  if (!file) return [`${name} is not set: point it at the binary (docs/interop.md)`];
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    return [`${name}=${file} is not an executable file`];
  }
}

const DEMO_ZTUNNEL: ZtunnelPod = {
  name: 'ztunnel-7k2xq',
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  node: 'node-a',
  ip: '10.244.1.2',
};
const GENERATED_ZTUNNEL: ZtunnelPod = {
  name: 'ztunnel-0',
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  node: 'node-0',
  ip: '10.100.0.2',
};

export async function runParts(parts: PartName[], argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      workloads: { type: 'string', default: String(DEFAULT_MESH.workloads) },
      'churn-seconds': { type: 'string', default: '60' },
      'churn-rate': { type: 'string', default: '100' },
      only: { type: 'string' },
      report: { type: 'string' },
      // Keep the scratch folder (logs of ztunnel, istiod-ts's state, the meshes) for a look after the run.
      keep: { type: 'boolean', default: false },
    },
  });
  const missing: string[] = [];
  const bins: Partial<Record<string, string>> = {};
  for (const part of parts)
    for (const name of NEEDS[part]) {
      const found = executable(name);
      if (typeof found === 'string') bins[name] = found;
      else missing.push(...found);
    }
  if (missing.length > 0) {
    for (const m of [...new Set(missing)]) console.error(`interop: ${m}`);
    console.error('interop: nothing was run (see docs/interop.md for how to build and point at the peers)');
    return 1;
  }
  const workloads = Number(values.workloads);
  const churnSeconds = Number(values['churn-seconds']);
  const churnRate = Number(values['churn-rate']);
  const scratch = mkdtempSync(path.join(tmpdir(), 'istiod-ts-interop-'));
  const report = new Report();
  for (const [name, file] of Object.entries(bins)) report.peers[name] = file ?? '';
  try {
    if (parts.includes('ztunnel')) {
      const ztunnel = bins['ZTUNNEL_BIN']!;
      const churn = { perSecond: churnRate, seconds: churnSeconds, namespace: 'apps-1' };
      // Each scenario's control plane is made only when the scenario runs.
      const scenarios: {
        name: string;
        pod: ZtunnelPod;
        churn?: ScenarioOptions['churn'];
        plane: () => Promise<ControlPlane>;
      }[] = [
        {
          name: 'local-demo',
          pod: DEMO_ZTUNNEL,
          plane: async () => {
            const dir = path.join(scratch, 'demo');
            cpSync(path.join(REPO_ROOT, 'examples/demo'), dir, { recursive: true });
            return new LocalControlPlane(dir, path.join(scratch, 'demo-state'), await freePorts());
          },
        },
        {
          name: 'local-generated',
          pod: GENERATED_ZTUNNEL,
          churn,
          plane: async () => {
            const dir = path.join(scratch, 'generated');
            writeMesh(dir, generateMesh({ ...DEFAULT_MESH, workloads }));
            return new LocalControlPlane(dir, path.join(scratch, 'generated-state'), await freePorts());
          },
        },
        {
          name: 'kubernetes-generated',
          pod: GENERATED_ZTUNNEL,
          churn,
          plane: async () =>
            KubeControlPlane.create(
              generateMesh({ ...DEFAULT_MESH, workloads }),
              path.join(scratch, 'kube-state'),
              await freePorts(),
            ),
        },
      ];
      for (const s of scenarios) {
        if (values.only && s.name !== values.only) continue;
        await report.attempt('ztunnel', s.name, 'scenario ran to the end', async () => {
          const options: ScenarioOptions = {
            name: s.name,
            bin: ztunnel,
            workDir: path.join(scratch, `${s.name}-work`),
            plane: await s.plane(),
            pod: s.pod,
            ...(s.churn ? { churn: s.churn } : {}),
          };
          await new ZtunnelScenario(report, options).run();
          return '';
        });
      }
    }
    if (parts.includes('istioctl')) await istioctlPart(report, bins['ISTIOCTL_BIN']!, bins['ZTUNNEL_BIN']!, scratch);
  } finally {
    const out = values.report ?? path.join(REPO_ROOT, 'interop-report.json');
    report.write(out);
    console.log(`report written to ${out}`);
    console.log(report.summary());
    if (values.keep) console.log(`scratch kept in ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
  return report.failed === 0 ? 0 : 1;
}
