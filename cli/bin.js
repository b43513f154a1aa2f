#!/usr/bin/env node
'use strict';
// The `weft` executable: TypeScript sources run through tsx's require hook, no build step.
require('tsx/cjs');
require('./weft.ts').main();
