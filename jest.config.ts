import type { Config } from 'jest';

// One config for every suite: unit tests, generated integration tests and the end-to-end
// suites that run against the real Temporal dev server and FerretDB started by globalSetup.
const config: Config = {
  testEnvironment: 'node',
  injectGlobals: true,
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // oauth4webapi ships only ES modules; jest's CommonJS runtime needs it transformed.
    'node_modules/oauth4webapi/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!oauth4webapi/)'],
  // Integration folders outside Weft (tests of `weft init`/`weft clone`) import the SDK by name and have no node_modules.
  moduleNameMapper: {
    '^weft/integration$': '<rootDir>/runtime/sdk.ts',
    '^weft/integrations/(.*)$': '<rootDir>/integrations/$1',
    '^zod$': '<rootDir>/node_modules/zod',
  },
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
  setupFiles: ['<rootDir>/tests/support/setup-globals.ts'],
  testTimeout: 120_000,
  maxWorkers: 2,
  collectCoverageFrom: ['{app,api,activities,integrations,runtime,store,auth,workflows,sandbox}/**/*.ts'],
};

export default config;
