// ESLint flat config. Formatting is Prettier's job (eslint-config-prettier turns off the
// rules that would fight it); layer rules are dependency-cruiser's (.dependency-cruiser.cjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import { builtinModules } from 'node:module';

// Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O modules.
const NODE_BUILTINS = builtinModules.flatMap((m) => [m, `node:${m}`]);
const IO_MODULES = [
  'mongodb',
  'express',
  'pino',
  'undici',
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/worker',
  'oauth4webapi',
  'jose',
  'playwright-core',
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.weft/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // tsc's noUnusedLocals/noUnusedParameters report these; `_name` marks a deliberate skip.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [...NODE_BUILTINS, ...IO_MODULES].map((name) => ({
            name,
            message: 'Workflow code is deterministic: no Node built-ins or I/O modules (run it in an activity).',
          })),
          patterns: [
            {
              group: ['../*', '!../workflows/*'],
              allowTypeImports: true,
              message: 'Workflows import only types from other folders (values would pull activity code into the sandbox).',
            },
          ],
        },
      ],
    },
  },
  {
    // The few plain CommonJS files (the `weft` launcher, the process supervisor).
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests, the CLI, scripts and benchmarks print to the console on purpose.
    files: ['tests/**/*.ts', 'bench/**/*.ts', 'cli/**/*.ts', 'scripts/**/*.ts', 'app/start/**/*.ts'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
