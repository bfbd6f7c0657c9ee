// Preloaded (--require) into worker threads whose entry is a .ts source under jest
// (test/support/ts-workers.ts): compiles every .ts module the thread requires with swc, using
// jest.config.js's own swc options, so the thread runs the same code jest's transform would give.
'use strict';

const fs = require('node:fs');
const swc = require('@swc/core');
const config = require('../../jest.config.js');

const [, swcOptions] = Object.values(config.transform)[0];

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const out = swc.transformSync(source, { ...swcOptions, filename, swcrc: false, sourceMaps: 'inline' });
  module._compile(out.code, filename);
};
