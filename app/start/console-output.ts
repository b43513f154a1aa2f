/**
 * Plain, readable lines for the person at the terminal. Runtime logs stay pino JSON; these
 * are only the start-up and shutdown messages of `npm start`.
 */
export function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function warn(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A framed block, for things the user must not miss (a secret key shown once). */
export function box(lines: string[]): string {
  const width = Math.max(...lines.map((l) => l.length));
  const edge = '─'.repeat(width + 2);
  return [`┌${edge}┐`, ...lines.map((l) => `│ ${l.padEnd(width)} │`), `└${edge}┘`].join('\n');
}

/** Two columns: a label and a value. */
export function table(rows: Array<[string, string]>, indent = '  '): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${indent}${label.padEnd(width)}  ${value}`).join('\n');
}
