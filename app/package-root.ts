import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The directory of Weft's package.json (where temporal-dev.yaml and, by default, .weft/ live), found by
 * walking up: from the sources app/ is one level below it, compiled into dist/app/ two.
 */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/**
 * WEFT_STATE_DIR as a path: everything a dev start keeps (the generated encryption key, the
 * Temporal dev server's and FerretDB's data, the lock of the servers using it). A relative
 * one is taken from the package root, whatever the working directory.
 */
export function stateDirectory(setting: string): string {
  return path.resolve(packageRoot(), setting);
}
