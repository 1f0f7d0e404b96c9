import t from 'tap';
import { definePlugin, z } from '@agent-host/sdk';
// @ts-expect-error: a plain-JavaScript script without type declarations
import { pluginReadmes, renderPluginSection } from '../../scripts/plugin-readmes.mjs';

interface Readme {
  name: string;
  file: string;
  current: string;
  expected: string;
}

t.test('every first-party plugin has a README whose extensions and keys match its manifest and schema', async (t) => {
  const readmes = (await pluginReadmes()) as Readme[];
  t.ok(readmes.length >= 9, `${readmes.length} plugins`);
  for (const readme of readmes) {
    t.ok(readme.current.length > 0, `plugins/${readme.name}/README.md exists`);
    t.equal(readme.current, readme.expected, `plugins/${readme.name}/README.md is current (npm run docs:plugins writes it)`);
    const intro = readme.current.slice(0, readme.current.indexOf('<!-- generated'));
    t.ok(intro.split('\n').filter(Boolean).length >= 3, `plugins/${readme.name}/README.md says what the plugin is for, not only its title`);
  }
});

t.test('every configuration key of a first-party plugin says what it does', async (t) => {
  for (const readme of (await pluginReadmes()) as Readme[]) {
    const rows = readme.current.split('\n').filter((line) => line.startsWith('| `'));
    for (const row of rows)
      t.notMatch(row, /\| {2}\|$/, `${readme.name}: ${row.slice(2, row.indexOf('`', 3) + 1)} has a description (.describe() in its schema)`);
  }
});

t.test('the generated part follows the schema: types, bounds, defaults, required keys, descriptions', async (t) => {
  const plugin = definePlugin({
    id: 'acme-search',
    sdk: '^1.0.0',
    config: z
      .object({
        endpoint: z.string().url().describe('Where the search service listens.'),
        page_size: z.number().int().min(1).max(100).default(20).describe('Results per page.'),
        mode: z.enum(['fast', 'exact']).default('fast').describe('Ranking | mode.'),
        regions: z.array(z.string()).default(['eu', 'us', 'ap', 'sa']),
      })
      .strict(),
    register() {},
  });
  const section = renderPluginSection({ id: 'acme-search', contributes: { retrievers: ['acme'] } }, plugin) as string;
  t.match(section, '- `retrievers`: `acme`');
  t.match(section, '`AGENT_HOST__PLUGINS__ACME_SEARCH__<KEY>=<value>`', 'the variable names a shell can export');
  t.match(section, '| `endpoint` | string, a URL | (required) | Where the search service listens. |');
  t.match(section, '| `page_size` | integer, at least 1, at most 100 | `20` | Results per page. |');
  t.match(section, '| `mode` | one of `"fast"`, `"exact"` | `"fast"` | Ranking \\| mode. |', 'a | in a description does not end its cell');
  t.match(section, '| `regions` | list of strings | `["eu","us","ap"]` and 1 more (4 in all) |  |');
  const bare = renderPluginSection({ id: 'bare' }, definePlugin({ id: 'bare', sdk: '^1.0.0', register() {} })) as string;
  t.match(bare, 'None declared in its manifest.');
  t.match(bare, 'No configuration keys.');
});
