import { readFileSync } from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');

/** Nobody may run an UNLICENSED package: Weft is Apache-2.0, in its manifest and its LICENSE file alike. */
test('package.json and LICENSE both say Apache-2.0', () => {
  const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { license: string };
  const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { license?: string }> };
  expect(manifest.license).toBe('Apache-2.0');
  expect(lock.packages[''].license).toBe('Apache-2.0');
  const license = readFileSync(path.join(REPO, 'LICENSE'), 'utf8');
  expect(license).toMatch(/Apache License\s+Version 2\.0, January 2004/);
  expect(license).toContain('END OF TERMS AND CONDITIONS');
});
