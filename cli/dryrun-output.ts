import Table from 'cli-table3';
import ora, { type Ora } from 'ora';
import pc from 'picocolors';
import type { DryRunObserver } from '../runtime/dryrun/dryrun-context';
import type { DryRunResult } from '../runtime/dryrun/run';

/** Rows of a model's table before "… more" (all of them are in `--json`). */
const TABLE_ROWS = 20;
/** Columns besides `id`: the first scalar fields of the records. */
const TABLE_COLUMNS = 4;
const CELL_WIDTH = 40;

/**
 * Progress while the function runs, on stderr: a spinner with running counts in a terminal,
 * one plain line per page elsewhere (CI logs, pipes).
 */
export class DryRunProgress {
  private requests = 0;
  private pages = 0;
  private readonly saved = new Map<string, number>();
  private readonly deleted = new Map<string, number>();
  private readonly spinner: Ora | null;

  constructor(label: string, interactive: boolean) {
    this.spinner = interactive ? ora({ text: label, stream: process.stderr }).start() : null;
    if (!interactive) process.stderr.write(`${label}\n`);
  }

  request(): void {
    this.requests += 1;
    this.update();
  }

  readonly observer: DryRunObserver = {
    page: ({ endpoint, items }) => {
      this.pages += 1;
      if (!this.spinner) process.stderr.write(`page ${this.pages}: ${items} item(s) from ${endpoint.split('?')[0]}\n`);
      this.update();
    },
    saved: (model, count) => {
      this.saved.set(model, (this.saved.get(model) ?? 0) + count);
      this.update();
    },
    deleted: (model, count) => {
      this.deleted.set(model, (this.deleted.get(model) ?? 0) + count);
      this.update();
    },
    invalid: (detail, id) => {
      const what = id === undefined ? detail.model : `${detail.model} record ${id}`;
      this.line(pc.yellow(`invalid: ${what} does not match its schema; run with --validate to see why`));
    },
  };

  /** A line that stays above the spinner. */
  line(text: string): void {
    if (this.spinner) this.spinner.clear();
    process.stderr.write(`${text}\n`);
    if (this.spinner) this.spinner.render();
  }

  private summary(): string {
    const models = [...this.saved].map(([m, n]) => `${m} ${n}`).concat([...this.deleted].map(([m, n]) => `${m} −${n}`));
    return `${this.requests} request(s), ${this.pages} page(s)${models.length ? `, ${models.join(', ')}` : ''}`;
  }

  private update(): void {
    if (this.spinner) this.spinner.text = this.summary();
  }

  succeed(): void {
    if (this.spinner) this.spinner.succeed(this.summary());
    else process.stderr.write(`done: ${this.summary()}\n`);
  }

  fail(): void {
    if (this.spinner) this.spinner.fail(this.summary());
  }
}

/** The result for people: per model a table of the records to save and delete, or the action's output. */
export function printResult(result: DryRunResult, out: NodeJS.WritableStream): void {
  const { writes } = result;
  if (result.kind === 'action') {
    out.write(`${pc.bold('output')}\n${JSON.stringify(result.output, null, 2)}\n`);
  }
  const models = [...new Set([...Object.keys(writes.batchSave), ...Object.keys(writes.batchDelete)])];
  if (result.kind === 'sync' && models.length === 0) out.write('No records to save or delete.\n');
  for (const model of models) {
    const saves = writes.batchSave[model] ?? [];
    const deletes = writes.batchDelete[model] ?? [];
    if (saves.length) out.write(`\n${pc.bold(model)}: ${pc.green(`${saves.length} record(s) to save`)}\n${table(saves)}\n`);
    if (deletes.length) out.write(`\n${pc.bold(model)}: ${pc.red(`${deletes.length} record(s) to delete`)}\n${table(deletes)}\n`);
  }
  for (const model of writes.trackDeletes) out.write(`${pc.dim(`${model}: records this run did not see would be marked deleted.`)}\n`);
  if (writes.metadataChanged) out.write(`\n${pc.bold('metadata')} (not written)\n${JSON.stringify(writes.metadata, null, 2)}\n`);
  if (writes.checkpoint !== null) out.write(`\n${pc.bold('checkpoint')} (not written)\n${JSON.stringify(writes.checkpoint)}\n`);
}

function table(records: unknown[]): string {
  const rows = records.map((r) => (r !== null && typeof r === 'object' ? (r as Record<string, unknown>) : { value: r }));
  const fields = ['id', ...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => k !== 'id' && isScalar(r[k]))))].slice(0, TABLE_COLUMNS + 1);
  const t = new Table({ head: fields.map((f) => pc.cyan(f)), wordWrap: false });
  for (const row of rows.slice(0, TABLE_ROWS)) t.push(fields.map((f) => cell(row[f])));
  const more = rows.length > TABLE_ROWS ? `\n… and ${rows.length - TABLE_ROWS} more (--json shows every record)` : '';
  return `${t.toString()}${more}`;
}

function isScalar(v: unknown): boolean {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

function cell(v: unknown): string {
  // One line per row: a description's line breaks would stretch the table.
  const text = (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)).replace(/\s+/g, ' ');
  return text.length > CELL_WIDTH ? `${text.slice(0, CELL_WIDTH - 1)}…` : text;
}
