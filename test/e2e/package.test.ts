// What `npm pack` ships: the compiled server (dist/src), its entry point, the .proto files it
// loads at run time, the demo mesh and the charts, and nothing of the tests or benches. The
// tarball, unpacked beside the project's dependencies, runs every subcommand's --help.

import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let work: string;
let files: string[];
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-pack-'));
  // npm test built dist/ already; --ignore-scripts keeps pack from building it again.
  const out = execFileSync(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  const [report] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
  if (!report) throw new Error(`npm pack printed no report: ${out}`);
  files = report.files.map((f) => f.path);
  execFileSync('tar', ['-xzf', path.join(work, report.filename), '-C', work]);
  // The dependencies a registry install would bring.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'package', 'node_modules'), 'dir');
}, 120_000);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe('npm pack', () => {
  it('ships the compiled server, its protos, the demo and the charts, and no tests or benches', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/istiod-ts.js',
        'dist/src/main.js',
        // The status page's script, compiled apart (src/server/ui/tsconfig.json) and read at start.
        'dist/src/server/ui/status-page.js',
        'proto/workload.proto',
        'examples/demo/README.md',
        'charts/istiod/Chart.yaml',
      ]),
    );
    expect(files.filter((f) => /^(src|test|bench|dist\/test|dist\/bench)\//.test(f))).toEqual([]);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg['private']).toBeUndefined();
  });

  it.each([['serve'], ['discovery'], ['token'], ['validate'], ['xds-client'], ['version']])(
    '`%s --help` runs from the unpacked tarball',
    (command) => {
      const r = spawnSync(process.execPath, [path.join(work, 'package', 'bin', 'istiod-ts.js'), command, '--help'], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^Usage: istiod-ts /m);
    },
  );
});
