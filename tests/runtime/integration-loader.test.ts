import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRegistry } from '../../app/core';
import { loadIntegrationsDir } from '../../runtime/integration-loader';

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

  function folder(name: string, index: string | null): string {
    const dir = join(root, name);
    mkdirSync(dir);
    if (index !== null) writeFileSync(join(dir, 'index.js'), index);
    return dir;
  }

  const definition = (name: string) => `module.exports = { default: {
    provider: { name: '${name}', displayName: 'X', authMode: 'API_KEY', baseUrl: 'https://api.example.com', apiKey: { header: 'x-key' } },
    syncs: [{ kind: 'sync', name: 'items', models: {}, exec: async () => {} }],
    actions: [],
  } };`;

  test('a folder whose index exports a definition is loaded', () => {
    folder('good', definition('good-one'));
    expect(loadIntegrationsDir(root).map((d) => d.provider.name)).toEqual(['good-one']);
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
});
