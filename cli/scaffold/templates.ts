import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * Writes a folder of templates (`<name>.tmpl`; `gitignore.tmpl` becomes `.gitignore`) into
 * `to`, replacing each `__KEY__` placeholder with its value. Returns the written paths,
 * relative to `to`. The templates are plain files, not TypeScript of Weft's own: they import
 * `weft/integration`, which only an author's folder resolves.
 */
export function writeTemplates(from: string, to: string, values: Record<string, string>): string[] {
  return templateFiles(from).map((template) => {
    const name = relative(from, template)
      .replace(/\.tmpl$/, '')
      .replace(/(^|[\\/])gitignore$/, '$1.gitignore');
    const target = join(to, name);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, fill(readFileSync(template, 'utf8'), values));
    return name;
  });
}

function fill(text: string, values: Record<string, string>): string {
  return text.replace(/__([A-Z_]+)__/g, (whole, key: string) => values[key] ?? whole);
}

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? templateFiles(join(dir, entry.name)) : entry.name.endsWith('.tmpl') ? [join(dir, entry.name)] : []));
}
