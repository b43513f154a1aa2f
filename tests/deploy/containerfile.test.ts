/**
 * deploy/: the image definition, its build context and the compose files, checked as text
 * (no container engine needed; deploy/local/smoke.sh builds and runs them for real). Each check
 * names what would break in a deployment if it failed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { configSchema } from '../../common/config';

const REPO = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string | undefined;
  from: string;
  instructions: Instruction[];
}

/** The Containerfile's stages, each with its instructions (continuation lines joined, comments dropped). */
function stages(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const result: Stage[] = [];
  for (const line of lines) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    if (keyword.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      result.push({ from: m[1], name: m[2], instructions: [] });
    } else if (result.length > 0) result[result.length - 1].instructions.push({ keyword: keyword.toUpperCase(), args });
  }
  return result;
}

const execForm = (args: string): string[] => JSON.parse(args) as string[];

describe('deploy/Containerfile', () => {
  const all = stages(read('deploy/Containerfile'));
  const runtime = all[all.length - 1];
  const find = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);

  it('is multi-stage: the runtime stage takes dist/ from a build stage and node_modules from a production-only install', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    const copies = find(runtime, 'COPY').map((c) => c.args);
    const distFrom = /--from=(\S+)\s+\S*\/dist\s/.exec(copies.find((c) => /\/dist\s/.test(c)) ?? '')?.[1];
    const modulesFrom = /--from=(\S+)\s+\S*\/node_modules\s/.exec(copies.find((c) => /node_modules/.test(c)) ?? '')?.[1];
    expect(distFrom).toBeDefined();
    expect(modulesFrom).toBeDefined();
    const build = all.find((s) => s.name === distFrom)!;
    expect(find(build, 'RUN').some((r) => /npm run build/.test(r.args))).toBe(true);
    const deps = all.find((s) => s.name === modulesFrom)!;
    const installs = find(deps, 'RUN').filter((r) => /npm (ci|install)/.test(r.args));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install.args).toMatch(/--omit=dev/);
    // No sources and no whole-context copy in the runtime stage.
    expect(copies.filter((c) => !c.includes('--from='))).not.toContainEqual(expect.stringMatching(/^\.\s/));
  });

  it('runs as a non-root user', () => {
    const users = find(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1].args.split(':')[0];
    expect(['', '0', 'root']).not.toContain(user);
  });

  it('runs node dist/cli/weft.js directly (node is PID 1 and gets SIGTERM), `api` by default', () => {
    const [entrypoint] = find(runtime, 'ENTRYPOINT').slice(-1);
    const [cmd] = find(runtime, 'CMD').slice(-1);
    const argv = execForm(entrypoint.args);
    expect(argv[0]).toBe('node');
    expect(argv[argv.length - 1]).toMatch(/(^|\/)dist\/cli\/weft\.js$/);
    expect(execForm(cmd.args)).toEqual(['api']);
    expect(find(runtime, 'STOPSIGNAL').map((s) => s.args)).toEqual(['SIGTERM']);
  });

  it('has a HEALTHCHECK that runs a script the image contains', () => {
    const [health] = find(runtime, 'HEALTHCHECK');
    expect(health).toBeDefined();
    const argv = execForm(health.args.replace(/^(--\S+\s+)*CMD\s+/, ''));
    const script = argv.find((a) => a.endsWith('.cjs'))!;
    expect(find(runtime, 'COPY').some((c) => c.args.endsWith(` ${script}`) || c.args.endsWith(` ./${path.basename(script)}`))).toBe(true);
  });

  it('defaults to production and listens on every address of the container', () => {
    const env = find(runtime, 'ENV')
      .map((e) => e.args)
      .join(' ');
    expect(env).toMatch(/NODE_ENV=production/);
    expect(env).toMatch(/WEFT_API_HOST=0\.0\.0\.0/);
  });
});

describe('.dockerignore (the build context)', () => {
  const rules = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it('is an allow-list that lets in every folder `npm run build` compiles, and what the Containerfile copies', () => {
    expect(rules[0]).toBe('*');
    const tsconfig = JSON.parse(read('tsconfig.build.json').replace(/^\s*\/\/.*$/gm, '')) as { include: string[] };
    for (const folder of tsconfig.include) expect(rules).toContain(`!${folder}/`);
    for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'deploy/healthcheck.cjs'])
      expect(rules).toContain(`!${file}`);
  });

  it('keeps out local state, the repository and host builds', () => {
    for (const excluded of ['.weft', '.git', 'node_modules', 'dist', 'tests'])
      expect(rules).not.toContainEqual(expect.stringMatching(new RegExp(`^!${excluded}(/|$)`)));
  });
});

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string | null>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  entrypoint?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
}

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as ComposeFile;
  const { services } = compose;
  /** Variables Weft's processes read that are not in its own config schema: Node's own. */
  const NOT_WEFT_CONFIG = new Set(['NODE_OPTIONS']);
  const configKeys = new Set(Object.keys(configSchema.shape));

  it('runs `weft setup` to completion after Temporal is set up and the database is healthy, then `weft api` and `weft worker`', () => {
    expect(services['weft-setup'].command).toEqual(['setup']);
    expect(services['weft-setup'].depends_on).toMatchObject({
      'temporal-namespace': { condition: 'service_completed_successfully' },
      mongodb: { condition: 'service_healthy' },
    });
    expect(services['weft-api'].command).toEqual(['api']);
    expect(services['weft-worker'].command).toEqual(['worker']);
    for (const name of ['weft-api', 'weft-worker'])
      expect(services[name].depends_on).toEqual({ 'weft-setup': { condition: 'service_completed_successfully' } });
    for (const name of ['weft-setup', 'weft-api', 'weft-worker']) expect(services[name].image).toBe(services['weft-api'].image);
  });

  it("sets only variables Weft's configuration reads (common/config.ts), and every one `weft api` / `weft worker` require", () => {
    for (const name of ['weft-setup', 'weft-api', 'weft-worker']) {
      const env = services[name].environment!;
      const unknown = Object.keys(env).filter((k) => !configKeys.has(k) && !NOT_WEFT_CONFIG.has(k));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
      for (const required of ['TEMPORAL_ADDRESS', 'MONGODB_URI', 'WEFT_ENCRYPTION_KEY']) expect(env[required]).toBeTruthy();
      expect(env.NODE_ENV).toBe('production');
      // The values compose substitutes must satisfy the schema once substituted (defaults shown).
      const substituted = Object.fromEntries(
        Object.entries(env)
          // A key without a value passes the host's variable through, when it is set.
          .filter(([k, v]) => configKeys.has(k) && v != null)
          .map(([k, v]) => [
            k,
            v!.replace(/\$\{(\w+)(?::?[-?])?([^}]*)\}/g, (_m, variable: string, fallback: string) =>
              variable === 'WEFT_ENCRYPTION_KEY' ? Buffer.alloc(32).toString('base64') : fallback || 'x',
            ),
          ]),
      );
      expect(configSchema.safeParse(substituted).error?.issues ?? []).toEqual([]);
    }
  });

  it('publishes the API on the port it listens on, on every address', () => {
    const api = services['weft-api'];
    expect(api.environment!.WEFT_API_HOST).toBe('0.0.0.0');
    expect(api.ports!.some((p) => p.endsWith(`:${api.environment!.PORT}`))).toBe(true);
  });

  it('gives the worker a probe port, the one the image health check asks', () => {
    expect(services['weft-worker'].environment!.WEFT_WORKER_HEALTH_PORT).toBe('3004');
    expect(read('deploy/Containerfile')).toMatch(/WEFT_WORKER_HEALTH_PORT=3004\b/);
    expect(read('deploy/healthcheck.cjs')).toMatch(/process\.env\.WEFT_WORKER_HEALTH_PORT/);
  });

  it('creates the namespace before `weft setup` registers the search attributes in it', () => {
    expect(services['temporal-namespace'].entrypoint).toEqual(['/bin/sh']);
    expect(services['temporal-namespace'].command).toEqual(['/weft-setup/setup-namespace.sh']);
    expect(read('deploy/temporal/setup-namespace.sh')).toMatch(/temporal operator namespace create --namespace "\$NAMESPACE"/);
  });

  it('turns on eager activity dispatch on the Temporal server', () => {
    const dynamic = parse(read('deploy/temporal/dynamicconfig/weft.yaml')) as Record<string, Array<{ value: unknown }>>;
    expect(dynamic['system.enableActivityEagerExecution']).toEqual([{ value: true }]);
    expect(services.temporal.environment!.DYNAMIC_CONFIG_FILE_PATH).toBe('/etc/temporal/config/dynamicconfig/weft.yaml');
  });

  it('compose.local.yaml overrides only services compose.yaml has', () => {
    // `!override`: compose's tag for a list that replaces the base file's instead of extending it.
    const override = { tag: '!override', collection: 'seq' as const, resolve: (seq: unknown) => seq };
    const local = parse(read('deploy/compose.local.yaml'), { customTags: [override] }) as ComposeFile;
    for (const name of Object.keys(local.services)) expect(Object.keys(services)).toContain(name);
    for (const name of Object.keys(local.services).filter((n) => n.startsWith('weft-'))) {
      const unknown = Object.keys(local.services[name].environment ?? {}).filter((k) => !configKeys.has(k));
      expect(unknown).toEqual([]);
    }
  });
});
