// What the soak does to the server, one step at a time: manifest files of pods, services and
// authorization policies written, rewritten (in place or by rename, as editors save) and deleted
// in --configDir, over a bounded set of names so the mesh's size stays level while its content
// keeps changing.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Rng } from './prng';

/** Distinct churn files (each one pod, one service, one policy): the mesh grows to at most this many extra apps. */
export const CHURN_SLOTS = 40;

export interface ChurnCounts {
  writes: number;
  renames: number;
  deletes: number;
}

function manifest(slot: number, gen: number, node: string): string {
  const app = `churn-${slot}`;
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${app}-pod
  namespace: bookinfo
  labels: {app: ${app}, version: "v${gen}"}
  annotations: {ambient.istio.io/redirection: enabled}
spec:
  nodeName: ${node}
  serviceAccountName: ${app}
  containers: [{name: app, image: "example/app:${gen}", ports: [{name: http, containerPort: 8080}]}]
status:
  phase: Running
  podIP: 10.250.${slot}.${(gen % 250) + 1}
  podIPs: [{ip: 10.250.${slot}.${(gen % 250) + 1}}]
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Service
metadata: {name: ${app}, namespace: bookinfo}
spec:
  clusterIP: 10.96.250.${slot + 1}
  clusterIPs: [10.96.250.${slot + 1}]
  selector: {app: ${app}}
  ports: [{name: http, port: ${8000 + (gen % 50)}, targetPort: 8080, protocol: TCP}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ${app}, namespace: bookinfo}
spec:
  selector: {matchLabels: {app: ${app}}}
  action: ALLOW
  rules: [{from: [{source: {principals: ["cluster.local/ns/bookinfo/sa/churn-${(slot + gen) % CHURN_SLOTS}"]}}], to: [{operation: {ports: ["${8080 + (gen % 3)}"]}}]}]
`;
}

export class Churner {
  readonly counts: ChurnCounts = { writes: 0, renames: 0, deletes: 0 };
  private readonly gens = new Array<number>(CHURN_SLOTS).fill(0);

  constructor(private readonly dir: string) {}

  /** One file operation: mostly writes of a new generation, some by rename, some deletes. */
  step(rng: Rng): void {
    const slot = rng.int(CHURN_SLOTS);
    const file = path.join(this.dir, `churn-${slot}.yaml`);
    if (rng.chance(0.25) && fs.existsSync(file)) {
      fs.rmSync(file);
      this.counts.deletes++;
      return;
    }
    const text = manifest(slot, ++this.gens[slot]!, rng.chance(0.5) ? 'node-a' : 'node-b');
    if (rng.chance(0.3)) {
      const tmp = path.join(this.dir, `.churn-${slot}.yaml.tmp`);
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, file);
      this.counts.renames++;
    } else {
      fs.writeFileSync(file, text);
      this.counts.writes++;
    }
  }
}
