import Module from 'node:module';
import { join } from 'node:path';

/** The specifier integration code imports Weft's contract from (runtime/sdk.ts). */
const SDK_SPECIFIER = 'weft/integration';
/** Weft's pre-built integrations' modules, for a clone that keeps a pre-built provider (`weft/integrations/luma/provider`). */
const PREBUILT_PREFIX = 'weft/integrations/';

type ResolveFilename = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;
interface ResolvingModule {
  _resolveFilename: ResolveFilename;
}

let installed: ResolveFilename | null = null;

/**
 * Makes `weft/integration`, `weft/integrations/<pre-built>/...` and `zod` (and `zod/...`) resolve to Weft's own modules from a
 * file anywhere on disk, for CommonJS requires (tsx's and compiled Weft's): an author's
 * integrations folder has no node_modules, and one zod for Weft and its integrations keeps
 * schemas interchangeable. Node 20 has no public synchronous resolve hook for require, so
 * this wraps Module._resolveFilename, as tsx itself does. Jest resolves through its own
 * moduleNameMapper instead (jest.config.ts, the scaffold's jest config).
 *
 * Weft's modules are resolved as if this module asked for them, and this hook must be the
 * outermost one: a compiled Weft loads TypeScript integrations through a tsx namespace
 * (runtime/typescript-integrations.ts), which tags every module its files require with the
 * namespace, so a hook under it would give the integration a second copy of the SDK and of
 * zod. Called again after another hook wrapped it, it wraps that one.
 */
export function registerSdkResolution(): void {
  const resolving = Module as unknown as ResolvingModule;
  if (installed && resolving._resolveFilename === installed) return;
  const sdk = require.resolve('./sdk');
  const original = resolving._resolveFilename.bind(Module);
  const hook: ResolveFilename = (request, parent, isMain, options) => {
    if (request === SDK_SPECIFIER) return original(sdk, module, isMain, options);
    if (request.startsWith(PREBUILT_PREFIX))
      return original(join(__dirname, '..', 'integrations', request.slice(PREBUILT_PREFIX.length)), module, isMain, options);
    // From Weft's own node_modules.
    if (request === 'zod' || request.startsWith('zod/')) return original(request, module, isMain, options);
    return original(request, parent, isMain, options);
  };
  installed = hook;
  resolving._resolveFilename = hook;
}
