import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { z } from 'zod';
import { buildOpenApiDocument, type OpenApiDocument } from '../../api/openapi/document';
import { API_ROUTES } from '../../api/route-registry';
import { listRoutes, openApiPath } from '../../api/routing/route';
import type { alertWebhookPayload, authWebhookPayload, syncWebhookPayload } from '../../api/schemas/webhook-payloads';
import { buildRegistry } from '../../app/core';
import type { AuthWebhookPayload } from '../../webhooks/auth-webhook';
import type { ChatMessage } from '../../webhooks/chat-alert-messages';
import type { SyncWebhookPayload } from '../../webhooks/sync-webhooks';

/**
 * The senders' own payload types fit the document's webhook schemas (checked by `tsc`, which
 * `npm run lint` runs over tests too): a field added to a payload and not to its schema fails
 * to compile here.
 */
type Fits<Sent, Documented> = [Sent] extends [Documented] ? true : false;
const payloadsFit: [
  Fits<AuthWebhookPayload, z.infer<typeof authWebhookPayload>>,
  Fits<SyncWebhookPayload, z.infer<typeof syncWebhookPayload>>,
  Fits<ChatMessage, z.infer<typeof alertWebhookPayload>>,
] = [true, true, true];

/**
 * Redocly's linter (recommended rules) over the document. `@redocly/openapi-core` ships only ES
 * modules, which jest's CommonJS runtime cannot load, so it runs in a child Node process.
 */
const LINT_SCRIPT = `
import { createConfig, lintDocument, BaseResolver, makeDocumentFromString } from '@redocly/openapi-core';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const config = await createConfig({ extends: ['recommended'] });
const problems = await lintDocument({ document: makeDocumentFromString(text, '/openapi.json'), config, externalRefResolver: new BaseResolver() });
process.stdout.write(JSON.stringify(problems.map((p) => ({ severity: p.severity, rule: p.ruleId, message: p.message, at: p.location?.[0]?.pointer }))));
`;

function lint(document: OpenApiDocument): Promise<Array<{ severity: string; rule: string; message: string; at: string }>> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', LINT_SCRIPT],
      { cwd: join(__dirname, '../..'), maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
    child.stdin!.end(JSON.stringify(document));
  });
}

describe('the OpenAPI document', () => {
  // The product's registry, with a WEFT_INTEGRATIONS_DIR integration (tests/custom-integration/acme).
  const document = buildOpenApiDocument(buildRegistry({ WEFT_INTEGRATIONS_DIR: join(__dirname, '../custom-integration') }));
  const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId?: string; summary?: string; responses: Record<string, unknown> }>).map(([method, op]) => ({
      path,
      method,
      op,
    })),
  );

  test('its license is the repository’s (package.json, LICENSE)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { license } = require('../../package.json') as { license: string };
    expect(document.info.license).toEqual({ name: license, identifier: license });
  });

  test('Redocly’s recommended rules find no error in it', async () => {
    expect(payloadsFit).toEqual([true, true, true]);
    const problems = await lint(document);
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors).toEqual([]);
    // The warning that remains, and why it stays: /health has no 4xx (it takes no input and is not rate limited).
    expect(problems.map((p) => `${p.rule} ${p.at}`).sort()).toEqual(['operation-4xx-response #/paths/~1health/get/responses']);
  }, 60_000);

  // The registry's routes (each at every mount), as the document names them: `GET /integrations/{key}`.
  const registry = listRoutes(API_ROUTES);
  const documented = registry.flatMap((r) =>
    'undocumented' in r.route
      ? []
      : (r.method === 'all' ? ['get', 'post', 'put', 'patch', 'delete'] : [r.method]).map((m) => `${m.toUpperCase()} ${openApiPath(r.path)}`),
  );
  // Documented from the integrations (tests/custom-integration/acme's too): an operation per endpoint its syncs and actions declare.
  const fromIntegrations = (route: string) => /^(GET|POST) \/v1\//.test(route);

  test('every route of the registry is in it, at every mount and method, and nothing else; each with a unique operationId and a summary', () => {
    const routes = operations.map((o) => `${o.method.toUpperCase()} ${o.path}`);
    expect(registry.length).toBeGreaterThan(30);
    for (const route of documented.filter((r) => !r.startsWith('GET /v1/') && !r.startsWith('POST /v1/'))) expect(routes).toContain(route);
    expect(routes.filter((route) => !documented.includes(route) && !fromIntegrations(route))).toEqual([]);
    for (const route of [
      'GET /v1/luma/list-events',
      'GET /v1/user-files',
      'GET /v1/list-drives',
      'GET /v1/pull-requests',
      'GET /v1/acme/tasks',
      'POST /v1/luma/create-event',
    ]) {
      expect(routes).toContain(route);
    }
    const ids = operations.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.filter((o) => !o.op.summary)).toEqual([]);
  });

  test('every secret-key route says so, and its errors are the one error body', () => {
    // The routes the registry says take no secret key: `/health`, the document, the browser routes ...
    const publicRoutes = registry.filter((r) => r.route.auth !== 'secret-key').map((r) => openApiPath(r.path));
    expect(publicRoutes).toEqual(expect.arrayContaining(['/health', '/ready', '/openapi.json', '/connect', '/oauth/callback']));
    expect(document.security).toEqual([{ secretKey: [] }]);
    for (const { path, op } of operations) {
      const security = (op as { security?: unknown[] }).security;
      expect({ path, public: Array.isArray(security) && security.length === 0 }).toEqual({ path, public: publicRoutes.includes(path) });
      if (publicRoutes.includes(path)) continue;
      for (const status of ['400', '401', '429', '500', '503']) {
        const response = op.responses[status] as { content?: Record<string, { schema?: unknown }> } | undefined;
        expect({ path, status, schema: response?.content?.['application/json']?.schema }).toEqual({
          path,
          status,
          schema: { $ref: '#/components/schemas/Error' },
        });
      }
    }
  });

  test('the API’s rate-limit headers are declared on every answer of a secret-key route but its 401, Retry-After on its 429', () => {
    const names = ['RateLimit', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    expect(Object.keys(document.components?.headers ?? {}).sort()).toEqual(names);
    let declared = 0;
    for (const { path, method, op } of operations) {
      const keyed = (op as { security?: unknown[] }).security?.length !== 0;
      for (const [status, response] of Object.entries(op.responses as Record<string, { headers?: Record<string, { $ref?: string }> }>)) {
        const headers = response.headers ?? {};
        const expected = keyed && status !== '401' ? names.map((n) => `#/components/headers/${n}`) : [];
        expect({ path, method, status, refs: names.map((n) => headers[n]?.$ref).filter(Boolean) }).toEqual({ path, method, status, refs: expected });
        if (keyed && status === '429') expect({ path, method, retryAfter: 'retry-after' in headers }).toEqual({ path, method, retryAfter: true });
        declared += expected.length ? 1 : 0;
      }
    }
    expect(declared).toBeGreaterThan(100);
  });

  test('each integration’s models are components, and the record routes refer to them', () => {
    const schemas = Object.keys(document.components?.schemas ?? {});
    for (const model of [
      'CalendarEvent',
      'UnifiedEvent',
      'File',
      'SelectedFile',
      'UnifiedFile',
      'Repository',
      'PullRequest',
      'Commit',
      'UnifiedRepository',
      'UnifiedPullRequest',
      'UnifiedCommit',
      // tests/custom-integration/acme, from WEFT_INTEGRATIONS_DIR
      'Task',
      'Error',
    ]) {
      expect(schemas).toContain(model);
    }
    const text = (path: string) => JSON.stringify(document.paths?.[path]);
    expect(text('/v1/luma/list-events')).toContain('#/components/schemas/CalendarEvent');
    expect(text('/v1/luma/list-events')).toContain('#/components/schemas/UnifiedEvent');
    expect(text('/v1/luma/list-events')).not.toContain('#/components/schemas/File"');
    for (const model of ['CalendarEvent', 'File', 'UnifiedFile', 'PullRequest', 'Task']) expect(text('/records')).toContain(`#/components/schemas/${model}"`);
  });

  test('the webhooks Weft sends are OpenAPI 3.1 webhooks, with their signature headers', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual(['alert', 'async_action', 'auth', 'sync']);
    const auth = JSON.stringify(document.webhooks?.auth);
    expect(auth).toContain('#/components/schemas/AuthWebhook');
    expect(auth).toContain('webhook-signature');
  });
});
