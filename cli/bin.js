#!/usr/bin/env node
'use strict';
// The `weft` executable. Production runs the compiled JavaScript `npm run build` wrote to
// dist/ (no TypeScript compiler in the process: less memory, faster start). Without a build
// it runs the TypeScript sources through tsx's require hook, for development.
const { existsSync } = require('node:fs');
const path = require('node:path');

const compiled = path.join(__dirname, '..', 'dist', 'cli', 'weft.js');
if (existsSync(compiled)) {
  require(compiled).main();
} else {
  process.stderr.write('weft: no build in dist/, running the TypeScript sources through tsx (`npm run build` for production)\n');
  require('tsx/cjs');
  require('./weft.ts').main();
}
