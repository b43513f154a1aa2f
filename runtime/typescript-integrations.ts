import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { WeftError } from '../common/errors';
import { registerSdkResolution } from './sdk-resolution';

type ScopedRequire = (id: string, fromFile: string) => unknown;
/** What this module uses of `tsx/cjs/api` (its types are published for node16 resolution only). */
interface TsxCjsApi {
  register(options: { namespace: string }): { require: ScopedRequire };
}

/**
 * Whether this Weft runs compiled (`npm run build`, plain node): then no TypeScript loader is
 * in the process, unlike tsx (development) and jest, which load an author's index.ts themselves.
 */
const weftIsCompiled = __filename.endsWith('.js');

/** tsx's require, scoped to its namespace: created once, at the first TypeScript folder. */
let typeScriptRequire: ScopedRequire | null = null;

/**
 * The module of an integration folder's index. A compiled Weft loads an author's TypeScript
 * folder (index.ts, no index.js beside it) through tsx's CommonJS loader registered under a
 * namespace of its own: only the files this folder requires are compiled on the fly, never
 * Weft's own JavaScript, and `weft/integration` and `zod` still resolve to Weft's compiled
 * modules (the SDK hook stays the outermost one). A folder the author compiled (index.js)
 * loads as plain JavaScript.
 */
export function requireIntegrationIndex(folder: string): Record<string, unknown> {
  const typeScriptOnly = weftIsCompiled && !existsSync(join(folder, 'index.js')) && existsSync(join(folder, 'index.ts'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (!typeScriptOnly) return require(require.resolve(folder)) as Record<string, unknown>;
  return scopedTypeScriptRequire(folder)(join(folder, 'index.ts'), __filename) as Record<string, unknown>;
}

function scopedTypeScriptRequire(folder: string): ScopedRequire {
  if (typeScriptRequire) return typeScriptRequire;
  let tsx: TsxCjsApi;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    tsx = require('tsx/cjs/api') as TsxCjsApi;
  } catch {
    throw new WeftError(
      'integration_typescript_unsupported',
      `${join(folder, 'index.ts')} is TypeScript and this compiled Weft cannot load it: its tsx dependency (a production dependency of Weft) is not installed. Install it, or compile the folder to JavaScript beside its sources (index.js next to index.ts), e.g. in a weft init project: \`npx esbuild 'integrations/**/*.ts' --outdir=integrations --outbase=integrations --format=cjs --platform=node\`.`,
    );
  }
  const scoped = tsx.register({ namespace: 'weft-integrations' }).require;
  // tsx's hook now wraps the SDK's: put the SDK's back on top (see registerSdkResolution).
  registerSdkResolution();
  typeScriptRequire = scoped;
  return scoped;
}
