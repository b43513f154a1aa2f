import type { Config } from '../../common/config';
import type { Stores } from '../../store/db';
import { box, say } from './console-output';

interface EnvironmentSpec {
  name: string;
  envVar: 'WEFT_DEV_SECRET_KEY' | 'WEFT_PROD_SECRET_KEY';
}

const ENVIRONMENTS: EnvironmentSpec[] = [
  { name: 'dev', envVar: 'WEFT_DEV_SECRET_KEY' },
  { name: 'prod', envVar: 'WEFT_PROD_SECRET_KEY' },
];

/**
 * Creates `dev` and `prod` on first start. A generated key exists in plaintext only now
 * (the database keeps its hash), so it is shown once, framed, with how to pin it.
 */
export async function ensureEnvironments(stores: Stores, config: Config, command = 'npm start'): Promise<void> {
  const shown: Array<{ spec: EnvironmentSpec; key: string }> = [];
  const existing: EnvironmentSpec[] = [];
  for (const spec of ENVIRONMENTS) {
    const provided = config[spec.envVar];
    const result = await stores.environments.ensure(spec.name, provided);
    if (result.created && !provided && result.secretKey) shown.push({ spec, key: result.secretKey });
    else if (result.created) say(`environment ${spec.name} created with the key from ${spec.envVar}`);
    else if (provided) say(`environment ${spec.name}: secret key from ${spec.envVar}`);
    else existing.push(spec);
  }
  if (existing.length > 0) {
    const plural = existing.length > 1;
    say(
      `environment${plural ? 's' : ''} ${existing.map((e) => e.name).join(' and ')} exist${plural ? '' : 's'} ` +
        `(keys are printed only when created; set ${existing.map((e) => e.envVar).join(' / ')} to replace a lost one)`,
    );
  }
  if (shown.length === 0) return;
  const labelWidth = Math.max(...shown.map((s) => s.spec.name.length));
  const dev = shown.find((s) => s.spec.name === 'dev');
  say();
  say(
    box([
      `Secret key${shown.length > 1 ? 's' : ''} of the new environment${shown.length > 1 ? 's' : ''}. Shown ONCE: they will not be shown again.`,
      '',
      ...shown.map((s) => `  ${s.spec.name.padEnd(labelWidth)}  ${s.key}`),
      '',
      'Only a hash is stored. To pin a key (e.g. after wiping the database), run with',
      `  ${shown.map((s) => `${s.spec.envVar}=<key>`).join(' ')} ${command}`,
      ...(dev ? ['', 'For the README demo:', `  export WEFT_KEY=${dev.key}`] : []),
    ]),
  );
  say();
}
