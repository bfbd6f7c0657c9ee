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
  // Worker threads whose entry is a .ts source start with an swc require hook (src/ stays free of it).
  setupFiles: ['<rootDir>/test/support/ts-workers.ts'],
  testTimeout: 30000,
  // Two workers on CI's two cores: most suites wait on sockets, timers and child processes rather
  // than compute, and one worker (jest's default there) took 395 s of CI's 10-minute budget
  // against 227 s with two.
  maxWorkers: 2,
};
