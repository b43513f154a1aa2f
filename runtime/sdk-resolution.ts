import Module from 'node:module';
import { join } from 'node:path';

/** The specifier integration code imports Weft's contract from (runtime/sdk.ts). */
const SDK_SPECIFIER = 'weft/integration';
/** Weft's pre-built integrations' modules, for a clone that keeps a pre-built provider (`weft/integrations/luma/provider`). */
const PREBUILT_PREFIX = 'weft/integrations/';

interface ResolvingModule {
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
}

let registered = false;

/**
 * Makes `weft/integration`, `weft/integrations/<pre-built>/...` and `zod` (and `zod/...`) resolve to Weft's own modules from a
 * file anywhere on disk, for CommonJS requires (tsx's and compiled Weft's): an author's
 * integrations folder has no node_modules, and one zod for Weft and its integrations keeps
 * schemas interchangeable. Node 20 has no public synchronous resolve hook for require, so
 * this wraps Module._resolveFilename, as tsx itself does. Jest resolves through its own
 * moduleNameMapper instead (jest.config.ts, the scaffold's jest.config.js).
 */
export function registerSdkResolution(): void {
  if (registered) return;
  registered = true;
  const sdk = require.resolve('./sdk');
  const resolving = Module as unknown as ResolvingModule;
  const original = resolving._resolveFilename.bind(Module);
  resolving._resolveFilename = (request, parent, isMain, options) => {
    if (request === SDK_SPECIFIER) return original(sdk, parent, isMain, options);
    if (request.startsWith(PREBUILT_PREFIX))
      return original(join(__dirname, '..', 'integrations', request.slice(PREBUILT_PREFIX.length)), parent, isMain, options);
    // Resolved as if this module asked: from Weft's own node_modules.
    if (request === 'zod' || request.startsWith('zod/')) return original(request, module, isMain, options);
    return original(request, parent, isMain, options);
  };
}
