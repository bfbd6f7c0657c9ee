// The production image (Dockerfile, .dockerignore) agrees with the chart and the package. No
// Docker engine runs here, so the test reads the Dockerfile and assembles the image's file
// layout by hand to run the entrypoint from it.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { SERVE_ENV } from '../../../src/config/options';
import { helmTemplate } from '../../support/helm';
import { deploymentOf } from './istiod-objects';

const ROOT = path.join(__dirname, '..', '..', '..');
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions with line continuations joined and comments dropped. */
function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const space = l.indexOf(' ');
      return { op: l.slice(0, space).toUpperCase(), args: l.slice(space + 1).trim() };
    });
}

const all = instructions(dockerfile);
const finalStage = all.slice(all.map((i) => i.op).lastIndexOf('FROM'));

/** .dockerignore as an allow-list: `*` then `!path` lines. */
function contextAllows(file: string): boolean {
  const lines = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (lines[0] !== '*') throw new Error('.dockerignore is expected to start with "*" (an allow-list)');
  return lines.slice(1).some((l) => l.startsWith('!') && (file === l.slice(1).replace(/\/$/, '') || file.startsWith(l.slice(1).replace(/\/?$/, '/'))));
}

describe('Dockerfile', () => {
  test('every stage starts from Node 20 slim', () => {
    const froms = all.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0]);
    expect(froms.length).toBeGreaterThan(0);
    expect(new Set(froms)).toEqual(new Set(['node:20-slim']));
  });

  test('the runtime stage installs production dependencies only, with npm ci', () => {
    expect(all.some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    expect(finalStage.some((i) => i.op === 'COPY' && /--from=deps \/app\/node_modules/.test(i.args))).toBe(true);
  });

  test('runs as the non-root user the chart runs as', () => {
    const user = finalStage.filter((i) => i.op === 'USER').map((i) => i.args).pop();
    expect(user).toBe('1337:1337');
    const pod = deploymentOf(helmTemplate('istiod')).podSecurityContext as { runAsUser: number; runAsGroup?: number };
    expect(`${pod.runAsUser}:${pod.runAsGroup}`).toBe(user);
  });

  test('the entrypoint is istiod-ts, linked to the package bin', () => {
    expect(finalStage.find((i) => i.op === 'ENTRYPOINT')?.args).toBe('["istiod-ts"]');
    expect(dockerfile).toContain(`ln -s /app/${pkg.bin['istiod-ts']} /usr/local/bin/istiod-ts`);
  });

  test('relative defaults resolve from / as istiod does, so ./etc/cacerts is the chart mount', () => {
    const workdir = finalStage.filter((i) => i.op === 'WORKDIR').map((i) => i.args).pop()!;
    expect(path.posix.resolve(workdir, SERVE_ENV.ROOT_CA_DIR.default)).toBe('/etc/cacerts');
  });

  test('every file copied from the build context exists and is let through by .dockerignore', () => {
    const sources = all
      .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) {
      expect({ src, exists: fs.existsSync(path.join(ROOT, src)), allowed: contextAllows(src.replace(/\/$/, '')) }).toEqual({ src, exists: true, allowed: true });
    }
  });

  test('every package the sources import is installed by npm ci --omit=dev', () => {
    // package-lock marks what only dev installs need with "dev": true; everything else (direct
    // dependencies and what they pull in) is in the image.
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const packages = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (p.endsWith('.ts')) {
          const text = fs.readFileSync(p, 'utf8');
          for (const m of text.matchAll(/^(?!import type)(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
            const spec = m[1] ?? m[2]!;
            if (spec.startsWith('.') || spec.startsWith('node:')) continue;
            packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
          }
        }
      }
    };
    walk(path.join(ROOT, 'src'));
    const builtins = new Set(builtinModules);
    const notInImage = [...packages].filter((p) => !builtins.has(p)).filter((p) => {
      const entry = lock.packages[`node_modules/${p}`];
      return entry === undefined || entry.dev === true;
    });
    expect(packages.size).toBeGreaterThan(0);
    expect(notInImage).toEqual([]);
  });

  test('the image layout (package.json, bin, proto, dist/src, node_modules) starts the entrypoint from /', () => {
    const image = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-image-'));
    try {
      fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(image, 'package.json'));
      fs.cpSync(path.join(ROOT, 'bin'), path.join(image, 'bin'), { recursive: true });
      fs.cpSync(path.join(ROOT, 'proto'), path.join(image, 'proto'), { recursive: true });
      fs.mkdirSync(path.join(image, 'dist'));
      fs.symlinkSync(path.join(ROOT, 'dist', 'src'), path.join(image, 'dist', 'src'));
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(image, 'node_modules'));
      const r = spawnSync(process.execPath, [path.join(image, 'bin', 'istiod-ts.js'), 'serve', '--help'], { cwd: '/', encoding: 'utf8', timeout: 20_000 });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('Usage: istiod-ts');
    } finally {
      fs.rmSync(image, { recursive: true, force: true });
    }
  });
});
