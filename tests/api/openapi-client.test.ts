import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const CLIENT_DIR = join(ROOT, 'cli/api-client');

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * The typed client (cli/api-client/): its types are generated from the OpenAPI document and
 * committed, so they must be what the generator makes today; and they must make a wrong field
 * name a compile error, which `tsc` proves here on two small programs.
 */
describe('the typed API client', () => {
  test('cli/api-client/weft-api.ts is what `npm run client:generate` makes from today’s document', async () => {
    // openapi-typescript loads ES modules jest's runtime cannot: the generator runs under tsx, as the script does.
    const generated = await run([join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(CLIENT_DIR, 'generate.ts'), '--stdout']);
    expect(generated.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(generated.stdout.length).toBeGreaterThan(1_000);
    const current = generated.stdout === readFileSync(join(CLIENT_DIR, 'weft-api.ts'), 'utf8');
    expect({ current, fix: 'a schema changed: run `npm run client:generate` and commit cli/api-client/weft-api.ts' }).toMatchObject({ current: true });
  }, 60_000);

  test('records of a model have that model’s type; a wrong field or model name does not compile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-client-types-'));
    try {
      const header = `import { createWeftClient, listRecords, triggerAction } from ${JSON.stringify(join(CLIENT_DIR, 'client'))};
const client = createWeftClient({ baseUrl: 'http://127.0.0.1:3003', secretKey: 'weft_sk_dev_example' });
export async function use() {
  const page = await listRecords(client, { model: 'CalendarEvent', connectionId: 'user-1', providerConfigKey: 'luma' });
  const event = page.records[0];
`;
      writeFileSync(
        join(dir, 'right.ts'),
        `${header}  const name: string | undefined = event.name;
  const cursor: string = event._weft_metadata.cursor;
  const integrations = await client.GET('/integrations');
  const key: string | undefined = integrations.data?.data[0].unique_key;
  const created = await triggerAction(client, {
    action: 'create-event',
    input: { name: 'Launch', start_at: '2031-05-01T18:00:00Z', timezone: 'UTC' },
    connectionId: 'user-1',
    providerConfigKey: 'luma',
  });
  const startAt: string | undefined = created.data?.start_at;
  return [name, cursor, key, startAt];
}
`,
      );
      writeFileSync(
        join(dir, 'wrong.ts'),
        `${header}  const misspelt = event.nme;
  const notAModel = await listRecords(client, { model: 'CalendarEvnt', connectionId: 'user-1', providerConfigKey: 'luma' });
  const integrations = await client.GET('/integrations');
  const wrongKey = integrations.data?.data[0].uniqueKey;
  const wrongInput = await triggerAction(client, {
    action: 'create-event',
    input: { name: 'Launch', start_at: '2031-05-01T18:00:00Z', timzone: 'UTC' },
    connectionId: 'user-1',
    providerConfigKey: 'luma',
  });
  const wrongOutput = wrongInput.data?.startAt;
  return [misspelt, notAModel, wrongKey, wrongOutput];
}
`,
      );
      const tsc = await run([
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--esModuleInterop',
        '--target',
        'ES2022',
        '--module',
        'commonjs',
        '--moduleResolution',
        'node',
        '--types',
        'node',
        join(dir, 'right.ts'),
        join(dir, 'wrong.ts'),
      ]);
      const errors = tsc.stdout
        .split('\n')
        .filter((line) => / error TS\d+:/.test(line))
        .map((line) => line.replace(dir, '<dir>'));
      expect(errors.filter((e) => e.includes('right.ts'))).toEqual([]);
      const wrong = errors.filter((e) => e.includes('wrong.ts')).join('\n');
      expect(wrong).toMatch(/wrong\.ts\(6,\d+\): error TS2551: Property 'nme' does not exist on type 'WeftRecord<"CalendarEvent">'. Did you mean 'name'/);
      expect(wrong).toMatch(/wrong\.ts\(7,\d+\): error TS2820: Type '"CalendarEvnt"' is not assignable to type 'keyof RecordModels'/);
      expect(wrong).toMatch(/wrong\.ts\(9,\d+\): error TS2551: Property 'uniqueKey' does not exist .*Did you mean 'unique_key'/);
      // An action's input and output are its own: a misspelt input field, a misspelt output field.
      expect(wrong).toMatch(
        /wrong\.ts\(12,\d+\): error TS2561: Object literal may only specify known properties, but 'timzone' does not exist .*Did you mean to write 'timezone'/,
      );
      expect(wrong).toMatch(/wrong\.ts\(16,\d+\): error TS2551: Property 'startAt' does not exist .*Did you mean 'start_at'/);
      expect(errors).toHaveLength(5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
