// Guards ARCHITECTURE.md section 1: plugins -> sdk <- core <- host, and
// neither core nor host names a plugin or an orchestrator key in code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema } from '@agent-host/core';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(full);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [full] : [];
  });
}

/** Every module specifier a file imports or re-exports (static and dynamic). */
export function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const pattern = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
  for (const match of source.matchAll(pattern)) specifiers.push((match[1] ?? match[2] ?? match[3])!);
  return specifiers;
}

const pluginDirs = readdirSync(path.join(root, 'plugins')).map((id) => path.join(root, 'plugins', id));
const pluginPackages = pluginDirs.map((dir) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; agentHost: { id: string; contributes?: Record<string, string[]> } });

interface Rule {
  layer: string;
  dir: string;
  forbidden: (specifier: string) => boolean;
}

const internal = (s: string) => s.startsWith('@agent-host/');
const rules: Rule[] = [
  { layer: 'sdk', dir: path.join(root, 'sdk', 'src'), forbidden: (s) => internal(s) },
  { layer: 'core', dir: path.join(root, 'core', 'src'), forbidden: (s) => internal(s) && s !== '@agent-host/sdk' },
  { layer: 'host', dir: path.join(root, 'host', 'src'), forbidden: (s) => internal(s) && !['@agent-host/sdk', '@agent-host/core'].includes(s) },
  ...pluginDirs.map((dir) => ({ layer: `plugins/${path.basename(dir)}`, dir: path.join(dir, 'src'), forbidden: (s: string) => internal(s) && s !== '@agent-host/sdk' })),
];

for (const rule of rules) {
  t.test(`${rule.layer} imports only what the dependency direction allows`, async (t) => {
    const offences: string[] = [];
    for (const file of sourceFiles(rule.dir)) {
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        const escapes = specifier.startsWith('.') && !path.resolve(path.dirname(file), specifier).startsWith(rule.dir + path.sep);
        if (rule.forbidden(specifier) || escapes) offences.push(`${path.relative(root, file)} imports "${specifier}"`);
      }
    }
    t.same(offences, [], 'no import crosses the layer boundary');
  });
}

// A contributed key that is also a core config section (the `chroma` retriever, the `[chroma]` section) is a word core owns too.
const coreSections = new Set(Object.keys(configSchema.shape));

t.test('core and host never name a plugin, its package or an orchestrator key', async (t) => {
  const keys = pluginPackages.flatMap((p) => Object.values(p.agentHost.contributes ?? {}).flat()).filter((key) => key !== '*' && !coreSections.has(key));
  const names = [...pluginPackages.flatMap((p) => [p.agentHost.id, p.name]), ...keys];
  const offences: string[] = [];
  for (const dir of ['core', 'host']) {
    for (const file of sourceFiles(path.join(root, dir, 'src'))) {
      const source = readFileSync(file, 'utf8');
      for (const name of names) if (source.includes(`'${name}'`) || source.includes(`"${name}"`) || source.includes(`\`${name}\``)) offences.push(`${path.relative(root, file)} names "${name}"`);
    }
  }
  t.same(offences, []);
});

t.test('the import scanner sees the forms it guards', async (t) => {
  t.same(importsOf(`import a from 'x';\nimport { b } from "y";\nexport * from './z.js';\nawait import('w');\nimport 'side';`), ['x', 'y', './z.js', 'w', 'side']);
});
