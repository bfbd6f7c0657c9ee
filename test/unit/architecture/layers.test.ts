// The layer rule (tools/eslint/layers.cjs) run through ESLint itself on small files placed at paths
// under src/: an upward import fails with a message naming both modules, a downward one passes, and
// the table covers every folder of src/ and is itself one-way (no module may reach itself).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the rule is CommonJS so eslint.config.mjs and jest both load it
const layers = require('../../../tools/eslint/layers.cjs') as {
  ALLOWED: Record<string, string[]>;
  INNER: Record<string, string[]>;
  plugin: NonNullable<Linter.Config['plugins']>[string];
};

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

function lint(file: string, code: string): Linter.LintMessage[] {
  const linter = new Linter({ configType: 'flat' });
  return linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { layers: layers.plugin },
        rules: { 'layers/one-way': 'error' },
      },
    ],
    { filename: path.join(SRC, file) },
  );
}

describe('layer rule', () => {
  it('fails an upward import and names both modules and what is allowed', () => {
    const messages = lint('store/scratch.ts', "import { startServer } from '../server/server';\n");
    expect(messages).toHaveLength(1);
    expect(messages[0]?.ruleId).toBe('layers/one-way');
    expect(messages[0]?.message).toBe(
      "store/ may not import server/ ('../server/server'): store may import only [config, contract, log]",
    );
  });

  it('counts type-only imports, re-exports and dynamic imports', () => {
    const code = [
      "import type { AmbientIndex } from '../ambient/ambient-index';",
      "export { startXdsServer } from '../xds/server';",
      "export * from '../ca';",
      "const later = () => import('../webhook');",
      'void later;',
    ].join('\n');
    const messages = lint('mesh/scratch.ts', code);
    expect(messages.map((m) => m.message.split(' (')[0])).toEqual([
      'mesh/ may not import ambient/',
      'mesh/ may not import xds/',
      'mesh/ may not import ca/',
      'mesh/ may not import webhook/',
    ]);
  });

  it('fails the command line reaching into the composition root', () => {
    expect(lint('cli/scratch.ts', "import { startServer } from '../server/server';\n")).toHaveLength(1);
  });

  it('passes downward imports, imports inside a module and packages', () => {
    const code = [
      "import { MemoryStore } from '../store/memory-store';",
      "import { scopedLogger } from '../log/logger';",
      "import { codec } from './codec';",
      "import * as fs from 'node:fs';",
      'void [MemoryStore, scopedLogger, codec, fs];',
    ].join('\n');
    expect(lint('ambient/scratch.ts', code)).toEqual([]);
    expect(lint('server/scratch.ts', "import { AmbientIndex } from '../ambient/ambient-index';\n")).toEqual([]);
  });

  it('fails src/ importing from test/ or bench/', () => {
    const messages = lint('ca/scratch.ts', "import { fixture } from '../../test/support/ca';\n");
    expect(messages.map((m) => m.message)).toEqual(["src/ may not import from outside src/ ('../../test/support/ca')"]);
  });

  it('fails a folder that is not in the table, so a new module must choose its place', () => {
    const messages = lint('newthing/scratch.ts', "import { scopedLogger } from '../log/logger';\n");
    expect(messages[0]?.message).toContain('newthing/ is not in the layer table');
  });

  it('has a row for every folder and top-level file of src/', () => {
    const modules = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => e.name.replace(/\.ts$/, ''));
    expect(modules.filter((m) => !(m in layers.ALLOWED))).toEqual([]);
  });

  it('is one-way itself: no module can reach itself through the modules it may import', () => {
    const reaches = (from: string, target: string): boolean => {
      const seen = new Set<string>();
      const pending = [...(layers.ALLOWED[from] ?? [])];
      for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        if (next === target) return true;
        if (seen.has(next)) continue;
        seen.add(next);
        pending.push(...(layers.ALLOWED[next] ?? []));
      }
      return false;
    };
    expect(Object.keys(layers.ALLOWED).filter((m) => reaches(m, m))).toEqual([]);
    for (const targets of Object.values(layers.ALLOWED))
      for (const t of targets) expect(Object.keys(layers.ALLOWED)).toContain(t);
  });
});

/** Files at the top of a module a reader meets before its seams: more than this and it needs folders. */
const MAX_TOP_LEVEL_FILES = 10;

describe('inner layers (xds/, ca/)', () => {
  it('fails a folder importing one above it, naming the folders it may import', () => {
    const messages = lint('xds/wire/scratch.ts', "import { DeltaStream } from '../protocol/delta-stream';\n");
    expect(messages.map((m) => m.message)).toEqual([
      "xds/wire/ may not import protocol/ ('../protocol/delta-stream'): in xds/ a folder imports only the folders below it []",
    ]);
  });

  it("fails a folder importing its module's top-level files, which compose the folders", () => {
    const messages = lint('ca/signing/scratch.ts', "import { startCertificateAuthority } from '../index';\n");
    expect(messages[0]?.message).toBe(
      "ca/signing/ may not import its top-level files ('../index'): in ca/ a folder imports only the folders below it []",
    );
  });

  it('passes a folder importing one below it, the top importing any folder, and other modules as the table allows', () => {
    expect(
      lint('xds/debug/scratch.ts', "import { x } from '../protocol/push';\nimport { y } from '../wire/wire';\n"),
    ).toEqual([]);
    expect(
      lint('ca/roots/scratch.ts', "import { x } from '../signing/authority';\nimport { y } from '../../log/logger';\n"),
    ).toEqual([]);
    expect(lint('xds/server.ts', "import { x } from './debug/syncz';\n")).toEqual([]);
  });

  it('fails a folder missing from the inner table', () => {
    const messages = lint('ca/newfolder/scratch.ts', "import { x } from '../signing/authority';\n");
    expect(messages[0]?.message).toContain('ca/newfolder/ is not in the inner layer table');
  });

  it(`lists exactly the folders there are, and leaves at most ${MAX_TOP_LEVEL_FILES} files at each module's top`, () => {
    for (const [module, folders] of Object.entries(layers.INNER)) {
      const entries = fs.readdirSync(path.join(SRC, module), { withFileTypes: true });
      expect({
        module,
        folders: entries
          .filter((e) => e.isDirectory())
          .map((e) => e.name)
          .sort(),
      }).toEqual({
        module,
        folders: [...folders].sort(),
      });
      expect(entries.filter((e) => e.isFile()).length).toBeLessThanOrEqual(MAX_TOP_LEVEL_FILES);
    }
  });
});
