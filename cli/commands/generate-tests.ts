import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { packageRoot } from '../../app/package-root';
import { integrations as prebuilt } from '../../integrations';
import { withIntegrationsDir } from '../../runtime/integration-loader';
import { IntegrationRegistry } from '../../runtime/registry';
import { GenerateTestsError, generateTests } from '../generate-tests';

/**
 * `weft generate:tests [--integration <key>] [--function <name>] [--project <dir>]`: a snapshot
 * test per function with recorded mocks (see cli/generate-tests.ts).
 */
export function registerGenerateTests(program: Command): void {
  program
    .command('generate:tests')
    .description('Write tests/integrations/<integration>/<function>.test.ts for every function with recorded mocks (never over a hand-written file).')
    .option('--integration <key>', 'only this integration')
    .option('--function <name>', 'only this sync or action')
    .option('--project <dir>', 'the project folder (its integrations/ and tests/)', '.')
    .action(async (o: { integration?: string; function?: string; project: string }) => {
      const projectDir = path.resolve(o.project);
      if (!existsSync(projectDir)) throw new GenerateTestsError('project_missing', `--project ${projectDir} does not exist.`);
      const weftRoot = packageRoot();
      const own = isWeftRepo(projectDir);
      const projectIntegrations = path.join(projectDir, 'integrations');
      // app/core's buildRegistry without loading the core (its drivers: MongoDB, Temporal,
      // Express), which every `weft` command would otherwise load at start.
      const registry = new IntegrationRegistry(withIntegrationsDir(prebuilt, !own && existsSync(projectIntegrations) ? projectIntegrations : undefined));
      const outcomes = await generateTests({
        projectDir,
        registry,
        integrationDirs: [projectIntegrations, path.join(weftRoot, 'integrations')],
        integration: o.integration,
        functionName: o.function,
      });
      for (const out of outcomes) {
        const where = out.status === 'skipped' ? `${out.integration}/${out.functionName}` : path.relative(process.cwd(), out.file);
        process.stdout.write(`${out.status.padEnd(7)} ${where}${out.status === 'written' ? '' : `: ${out.reason}`}\n`);
      }
      const written = outcomes.filter((x) => x.status === 'written').length;
      process.stdout.write(`${written} test file(s) written\n`);
    });
}

function isWeftRepo(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'weft';
  } catch {
    return false;
  }
}
