// Tests import the TypeScript sources directly through swc (fast, CommonJS).
// @kubernetes/client-node 1.x and its auth dependencies ship as ES modules, which
// jest's CommonJS loader cannot require, so swc compiles those packages too.
const esmPackages = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          target: 'es2022',
          transform: { legacyDecorator: true, decoratorMetadata: true },
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  // The status page's browser script is compiled by its own tsconfig, not by swc: the server's
  // require.resolve of it (src/server/debug-ui.ts) gets the build's output, which globalSetup
  // compiles first when a source is newer.
  moduleNameMapper: { '^\\./ui/status-page\\.js$': '<rootDir>/dist/src/server/ui/status-page.js' },
  globalSetup: '<rootDir>/test/support/status-page-build.ts',
  // Worker threads whose entry is a .ts source start with an swc require hook (src/ stays free of it).
  setupFiles: ['<rootDir>/test/support/ts-workers.ts'],
  testTimeout: 30000,
  // Two workers on CI's two cores: most suites wait on sockets, timers and child processes rather
  // than compute, and one worker (jest's default there) took 395 s of CI's 10-minute budget
  // against 227 s with two.
  maxWorkers: 2,
};
