// Lint: typescript-eslint's strict type-checked rules, Prettier for layout (eslint-config-prettier turns
// off the rules that would fight it), and the layer rule that keeps src/ flowing one way
// (tools/eslint/layers.cjs; the table is explained in docs/architecture.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import layers from './tools/eslint/layers.cjs';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'bench/results/', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Numbers and booleans print the same everywhere; objects, undefined and null in a message are the bugs.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => resolve()` as a callback reads as what it is.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // `const { dropped, ...rest } = o` is how a field is left out of a copy; `dropped` is meant unused.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { layers: layers.plugin },
    rules: { 'layers/one-way': 'error' },
  },
  {
    // The status page's browser script (src/server/ui/tsconfig.json): scripts, not modules, compiled
    // into one, so each file's top-level functions and types are used by the files after it. tsc
    // checks those uses across files; here the top level is the script's global scope, left out of
    // the unused-variable check, as tsc leaves it too.
    files: ['src/server/ui/**/*.ts'],
    languageOptions: { sourceType: 'script' },
    rules: { '@typescript-eslint/no-unused-vars': ['error', { vars: 'local', ignoreRestSiblings: true }] },
  },
  {
    // In a test or a bench, `x!` on a value the code just produced is itself an assertion: when it is
    // wrong the run fails at that line. In src/ every remaining one carries a comment saying why it holds.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'interop/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  prettier,
);
