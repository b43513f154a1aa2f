import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRegistry } from '../../app/core';
import { loadIntegrationsDir } from '../../runtime/integration-loader';
import { integrations as prebuilt } from '../../integrations';

/**
 * WEFT_INTEGRATIONS_DIR: a folder that does not export an IntegrationDefinition stops the
 * start with a stable code naming the folder, instead of an integration that is silently
 * not there; a custom integration cannot take a pre-built one's name.
 */
describe('loading an integrations folder', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'weft-integrations-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function folder(name: string, index: string | null, files: Record<string, string> = {}): string {
    const dir = join(root, name);
    mkdirSync(dir);
    if (index !== null) writeFileSync(join(dir, 'index.js'), index);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    return dir;
  }

  const definition = (name: string) => `module.exports = { default: {
    provider: { name: '${name}', displayName: 'X', authMode: 'API_KEY', baseUrl: 'https://api.example.com', apiKey: { header: 'x-key' } },
    syncs: [{ kind: 'sync', name: 'items', models: {}, exec: async () => {} }],
    actions: [],
  } };`;

  test('a folder whose index exports a definition is loaded', () => {
    folder('good', definition('good-one'));
    expect(loadIntegrationsDir(root).map((l) => l.definition.provider?.name)).toEqual(['good-one']);
  });

  test('a folder without an IntegrationDefinition export: integration_export_missing', () => {
    const dir = folder('wrong-export', 'module.exports = { helper: () => 1 };');
    expect(() => loadIntegrationsDir(root)).toThrow(expect.objectContaining({ code: 'integration_export_missing', message: expect.stringContaining(dir) }));
  });

  test('a folder without an index: integration_index_missing', () => {
    folder('empty', null);
    expect(() => loadIntegrationsDir(root)).toThrow(expect.objectContaining({ code: 'integration_index_missing' }));
  });

  test('an export that is not a definition says what is wrong: integration_invalid', () => {
    folder('bad', definition('Not A Name'));
    expect(() => loadIntegrationsDir(root)).toThrow(
      expect.objectContaining({ code: 'integration_invalid', message: expect.stringContaining('provider.name') }),
    );
  });

  test('an index that throws: integration_unloadable', () => {
    folder('broken', 'throw new Error("boom");');
    expect(() => loadIntegrationsDir(root)).toThrow(expect.objectContaining({ code: 'integration_unloadable', message: expect.stringContaining('boom') }));
  });

  test('a missing directory: integrations_dir_unreadable', () => {
    expect(() => loadIntegrationsDir(join(root, 'nope'))).toThrow(expect.objectContaining({ code: 'integrations_dir_unreadable' }));
  });

  test('a custom integration named like a pre-built one: duplicate_integration', () => {
    folder('luma-again', definition('luma'));
    expect(() => buildRegistry({ WEFT_INTEGRATIONS_DIR: root })).toThrow(expect.objectContaining({ code: 'duplicate_integration' }));
  });

  test('the registry holds both, and the logger list gets the custom key header', () => {
    folder('good', definition('good-one'));
    const registry = buildRegistry({ WEFT_INTEGRATIONS_DIR: root });
    expect(registry.get('good-one')).toBeDefined();
    expect(registry.get('one-drive')).toBeDefined();
    expect(registry.secretHeaders()).toEqual(expect.arrayContaining(['x-key', 'x-luma-api-key']));
  });

  /**
   * Definitions that load but cannot work are refused at start, each with its own code and
   * the file that declares the function. The folder is outside Weft's tree: its code reaches
   * zod only through `weft/integration`.
   */
  describe('a definition that cannot work is refused at start, naming the file', () => {
    const provider = `{ name: 'checked', displayName: 'Checked', authMode: 'API_KEY', baseUrl: 'https://api.example.com', apiKey: { header: 'x-key' } }`;
    const index = (syncs: string, actions = '[]') => `const { z } = require('weft/integration');
      module.exports = { default: { provider: ${provider}, syncs: ${syncs}, actions: ${actions} } };`;
    const syncFile = (body: string) => `const { z } = require('weft/integration');
      const Item = z.object({ id: z.string() });
      exports.items = { kind: 'sync', name: 'items', description: 'd', endpoint: { method: 'GET', path: '/items' }, ${body} };`;

    test('a sync without exec: integration_exec_missing, in the file that declares it', () => {
      const dir = folder('no-exec', `module.exports = { default: { provider: ${provider}, syncs: [require('./syncs/items').items], actions: [] } };`, {
        'syncs/items.js': syncFile('models: { Item }'),
      });
      expect(() => loadIntegrationsDir(root)).toThrow(
        expect.objectContaining({
          code: 'integration_exec_missing',
          message: expect.stringContaining(`${join(dir, 'syncs', 'items.js')}: sync "items" has no exec`),
        }),
      );
    });

    test('a name used twice in an integration: integration_name_duplicate', () => {
      folder(
        'twice',
        `const { items } = require('./syncs/items');
        module.exports = { default: { provider: ${provider}, syncs: [items], actions: [{ kind: 'action', name: 'items', input: items.models.Item, output: items.models.Item, exec: async () => ({}) }] } };`,
        {
          'syncs/items.js': syncFile('models: { Item }, exec: async () => {}'),
        },
      );
      expect(() => loadIntegrationsDir(root)).toThrow(
        expect.objectContaining({ code: 'integration_name_duplicate', message: expect.stringContaining('"items" is used twice') }),
      );
    });

    test('a model that is not a zod schema: integration_model_invalid', () => {
      folder('not-zod', index(`[{ kind: 'sync', name: 'items', models: { Item: { id: 'string' } }, exec: async () => {} }]`));
      expect(() => loadIntegrationsDir(root)).toThrow(
        expect.objectContaining({
          code: 'integration_model_invalid',
          message: expect.stringMatching(/index\.js: sync "items": its model "Item" is not a zod schema/),
        }),
      );
    });

    test('an action whose output is not a zod schema: integration_model_invalid', () => {
      folder('bad-output', index('[]', `[{ kind: 'action', name: 'get-item', input: z.object({}), output: 'Item', exec: async () => ({}) }]`));
      expect(() => loadIntegrationsDir(root)).toThrow(
        expect.objectContaining({ code: 'integration_model_invalid', message: expect.stringContaining('action "get-item": its output is not a zod schema') }),
      );
    });

    test("an extension carrying another integration's provider: integration_invalid", () => {
      folder('mixed', `module.exports = { default: { extends: 'luma', provider: { name: 'github' }, syncs: [], actions: [] } };`);
      expect(() => loadIntegrationsDir(root)).toThrow(
        expect.objectContaining({ code: 'integration_invalid', message: expect.stringContaining('extends "luma" but names the provider of "github"') }),
      );
    });

    test('a folder extending an integration that does not exist: integration_provider_unknown', () => {
      const dir = folder('typo', `module.exports = { default: { extends: 'one-driv', syncs: [], actions: [] } };`);
      expect(() => buildRegistry({ WEFT_INTEGRATIONS_DIR: root })).toThrow(
        expect.objectContaining({
          code: 'integration_provider_unknown',
          message: expect.stringContaining(`${join(dir, 'index.js')}: extends "one-driv", which names no integration`),
        }),
      );
    });
  });

  test('a folder extending a pre-built integration keeps its provider, replaces a function by name and adds one', () => {
    folder(
      'luma-custom',
      `const { z } = require('weft/integration');
      const Event = z.object({ id: z.string() });
      const listEvents = { kind: 'sync', name: 'list-events', description: 'mine', endpoint: { method: 'GET', path: '/luma/list-events' }, models: { CalendarEvent: Event }, syncType: 'full', frequency: 'every 1h', autoStart: false, exec: async () => {} };
      const hosts = { kind: 'sync', name: 'hosts', description: 'new', endpoint: { method: 'GET', path: '/luma/hosts' }, models: { Host: Event }, syncType: 'full', frequency: 'every 1h', autoStart: false, exec: async () => {} };
      module.exports = { default: { extends: 'luma', syncs: [listEvents, hosts], actions: [] } };`,
    );
    const registry = buildRegistry({ WEFT_INTEGRATIONS_DIR: root });
    const luma = prebuilt.find((d) => d.provider.name === 'luma')!;
    expect(registry.get('luma')!.provider).toBe(luma.provider);
    expect(registry.getSync('luma', 'list-events')!.description).toBe('mine');
    expect(registry.getSync('luma', 'hosts')!.description).toBe('new');
    expect(registry.getAction('luma', 'create-event')).toBe(luma.actions.find((a) => a.name === 'create-event'));
    // The pre-built definition itself is not changed (other registries of the process see it as shipped).
    expect(luma.syncs.map((s) => s.description)).not.toContain('mine');
  });
});
