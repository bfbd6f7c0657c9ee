#!/usr/bin/env node
'use strict';
// The compiled entry point; `npm run build` produces dist/.
require('../dist/src/main.js').main(process.argv.slice(2));
