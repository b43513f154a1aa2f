/**
 * Weft's layer rules: a folder imports only the folders below it, so
 * an import that runs back up fails `npm run lint:layers`. Value and type imports count alike,
 * except where a rule says otherwise (workflows/, control/ and api/ may name workflow-side types).
 *
 *   common       -> (nothing)
 *   egress       -> common
 *   store        -> common
 *   runtime      -> common, egress
 *   integrations -> runtime (its integration API: types, errors, unified models), common
 *   auth         -> common, egress, runtime
 *   webhooks     -> common, egress, store, auth
 *   activities   -> common, egress, store, runtime, integrations, auth, webhooks
 *   workflows    -> @temporalio/workflow, and type-only imports of anything
 *   control      -> common, egress, store, runtime, auth, webhooks, activities (workflows/ type-only)
 *   api          -> all of the above except app/ (workflows/ type-only)
 *   app          -> everything (the composition root)
 *   cli, bench, tests -> anything
 *   sandbox, scripts  -> common
 */
const LAYERS = {
  common: [],
  egress: ['common'],
  store: ['common'],
  runtime: ['common', 'egress'],
  integrations: ['common', 'runtime'],
  auth: ['common', 'egress', 'runtime'],
  webhooks: ['common', 'egress', 'store', 'auth'],
  activities: ['common', 'egress', 'store', 'runtime', 'integrations', 'auth', 'webhooks'],
  // Sync control: the API and the worker (app/) both run it. workflows/ as types only (below).
  control: ['common', 'egress', 'store', 'runtime', 'auth', 'webhooks', 'activities', 'workflows'],
  api: ['common', 'egress', 'store', 'runtime', 'integrations', 'auth', 'webhooks', 'activities', 'workflows', 'control'],
  sandbox: ['common'],
  scripts: ['common'],
};

/** Anything outside the project's folders: npm packages and Node's own modules. */
const OUTSIDE = ['^node_modules/'];

const layerRules = Object.entries(LAYERS).map(([folder, allowed]) => ({
  name: `${folder}-imports-only-${allowed.length ? allowed.join('-') : 'itself'}`,
  comment: `${folder}/ may import only ${allowed.length ? allowed.map((a) => `${a}/`).join(', ') : 'itself'} (and npm packages)`,
  severity: 'error',
  from: { path: `^${folder}/` },
  to: {
    pathNot: [`^${folder}/`, ...allowed.map((a) => `^${a}/`), ...OUTSIDE],
    dependencyTypesNot: ['core'],
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles: a cycle makes two modules one, and neither can be understood or tested alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'integrations-use-the-runtime-api-only',
      comment: 'Integration code sees the runtime through its integration API (types, errors, unified models), not its internals.',
      severity: 'error',
      from: { path: '^integrations/' },
      to: { path: '^runtime/', pathNot: '^runtime/(types|errors|unified-models)\\.ts$' },
    },
    {
      name: 'control-and-api-name-workflows-by-type-only',
      comment:
        'The control layer and the API start workflows through the Temporal client, by name checked against the ' +
        "workflow's type; they may import workflow types, never their code.",
      severity: 'error',
      from: { path: '^(control|api)/' },
      to: { path: '^workflows/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-import-types-and-temporal-workflow-only',
      comment:
        'Workflow code runs in the deterministic sandbox: it may import @temporalio/workflow and other workflow files; ' +
        'anything else (activities, contracts) only as types, which vanish at compile time.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        pathNot: ['^workflows/', '^node_modules/@temporalio/workflow/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'nothing-imports-app-or-api',
      comment: 'app/ is the composition root and api/ a process it runs: only cli/, bench/ and tests/ (and themselves) import them.',
      severity: 'error',
      from: { pathNot: '^(app|api|cli|bench|tests)/' },
      to: { path: '^(app|api)/' },
    },
    {
      name: 'api-does-not-import-app',
      comment: 'The composition root wires the API, not the other way round.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^app/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|\\.weft)/' },
    // `import type` must be seen to be allowed where only types may go (workflows/).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.json', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
