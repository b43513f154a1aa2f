import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A mistake of the user's (an argument, a setting, something Weft refused): one line, no stack. */
export class DryRunUsageError extends Error {}

/** `--input` / `--metadata`: JSON, or `@<file>` holding JSON. The error names the option. */
export function parseJsonOption(option: '--input' | '--metadata', raw: string, cwd: string): unknown {
  let text = raw;
  if (raw.startsWith('@')) {
    const file = path.resolve(cwd, raw.slice(1));
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new DryRunUsageError(`${option} ${raw}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DryRunUsageError(`${option} is not valid JSON${raw.startsWith('@') ? ` (in ${raw.slice(1)})` : ''}: ${(err as Error).message}.`);
  }
}

export function parseMetadataOption(raw: string, cwd: string): Record<string, unknown> {
  const value = parseJsonOption('--metadata', raw, cwd);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DryRunUsageError('--metadata must be a JSON object.');
  return value as Record<string, unknown>;
}

export function parseLastSyncDate(raw: string): Date {
  const date = new Date(raw);
  if (Number.isNaN(date.getTime())) throw new DryRunUsageError(`--lastSyncDate "${raw}" is not a date (e.g. 2024-05-01 or 2024-05-01T12:00:00Z).`);
  return date;
}

/** Whether missing arguments may be asked for: a person at a terminal, not CI. */
export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI;
}

/** A missing argument: asked for in a terminal, an error anywhere else. */
export async function askFor(name: string, choices: string[] | null): Promise<string> {
  if (!canPrompt()) throw new DryRunUsageError(`Missing <${name}>: give it on the command line (it is asked for only in a terminal).`);
  const prompts = await import('@inquirer/prompts');
  if (choices) return prompts.select({ message: `Which ${name}?`, choices: choices.map((value) => ({ value })) });
  return prompts.input({ message: `${name}:`, validate: (v) => v.trim() !== '' || `${name} cannot be empty` });
}
