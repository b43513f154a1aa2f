import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The directory of Weft's package.json (where temporal-dev.yaml and .weft/ live), found by
 * walking up: from the sources app/ is one level below it, compiled into dist/app/ two.
 */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
