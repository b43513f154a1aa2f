import type { Config } from 'jest';

type ProjectConfig = Exclude<NonNullable<Config['projects']>[number], string>;

// What every suite shares: node, jest's globals, and one setup file exposing the
// testing workflow's SyncMock / ActionMock globals.
const shared: ProjectConfig = {
  testEnvironment: 'node',
  injectGlobals: true,
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // oauth4webapi and github-slugger ship only ES modules; jest's CommonJS runtime needs them transformed.
    'node_modules/(oauth4webapi|github-slugger)/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(oauth4webapi|github-slugger)/)'],
  // Integration folders outside Weft (tests of `weft init`/`weft clone`) import the SDK by name and have no node_modules.
  moduleNameMapper: {
    '^weft/integration$': '<rootDir>/runtime/sdk.ts',
    '^weft/integrations/(.*)$': '<rootDir>/integrations/$1',
    '^zod$': '<rootDir>/node_modules/zod',
  },
  setupFiles: ['<rootDir>/tests/support/setup-globals.ts'],
};

const GENERATED_TESTS = '<rootDir>/tests/integrations/';
const DOCS_TESTS = '<rootDir>/tests/docs/';

// Projects apart so that a run of generated tests (or the docs checks) alone (`npm test -- user-files.test`) skips the
// infrastructure: jest runs a project's globalSetup only when a test of that project is selected.
const config: Config = {
  projects: [
    // The generated snapshot tests replay saved mocks: no network, no servers.
    { ...shared, displayName: 'integrations', roots: [GENERATED_TESTS] },
    // The docs' own checks (links, the README's length) read files only: no servers either.
    { ...shared, displayName: 'docs', roots: [DOCS_TESTS] },
    // Everything else: unit tests and the end-to-end suites that run against the real Temporal
    // dev server and FerretDB started by globalSetup.
    {
      ...shared,
      displayName: 'weft',
      testPathIgnorePatterns: ['/node_modules/', GENERATED_TESTS, DOCS_TESTS],
      // Prints what a test file held back (Temporal's log) only when one of its tests failed.
      testEnvironment: '<rootDir>/tests/support/test-environment.ts',
      globalSetup: '<rootDir>/tests/support/global-setup.ts',
      globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
    },
  ],
  testTimeout: 120_000,
  maxWorkers: 2,
  collectCoverageFrom: ['{app,api,control,activities,integrations,runtime,store,auth,workflows,sandbox}/**/*.ts'],
};

export default config;
