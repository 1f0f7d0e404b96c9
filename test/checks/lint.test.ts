// The linter `npm test` runs first (eslint.config.js) fails on what it is there for. Each probe is linted as the
// text of a real module of core, so typescript-eslint reads it with core's types, and nothing is written to disk.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const moduleOfCore = path.join(root, 'core', 'src', 'paths.ts');
const eslint = new ESLint({ cwd: root });

async function findings(code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: moduleOfCore });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

t.test('a promise nobody awaits is an error', async (t) => {
  const found = await findings('export async function save(): Promise<void> {}\nexport function handler(): void {\n  save();\n}\n');
  t.match(found, [/^@typescript-eslint\/no-floating-promises: Promises must be awaited/]);
});

t.test('a promise where a condition is expected is an error', async (t) => {
  const found = await findings(
    'export async function allowed(): Promise<boolean> {\n  return false;\n}\nexport function check(): string {\n  return allowed() ? "yes" : "no";\n}\n',
  );
  t.match(found, [/^@typescript-eslint\/no-misused-promises: /]);
});

t.test('a value imported only as a type must be imported as one', async (t) => {
  const found = await findings("import { Sequelize } from 'sequelize';\nexport const open = (db: Sequelize) => db;\n");
  t.match(found, [/^@typescript-eslint\/consistent-type-imports: /]);
});

t.test("a console hook called behind a condition is an error (React's rules of hooks)", async (t) => {
  const [result] = await eslint.lintText(
    "import { useCan } from '../session';\nexport function useMayMount(write: boolean): boolean {\n  return write && useCan('agents.write');\n}\n",
    { filePath: path.join(root, 'console', 'src', 'components', 'states.tsx') },
  );
  t.match(
    result!.messages.map((m) => `${m.ruleId}: ${m.message}`),
    [/^react-hooks\/rules-of-hooks: React Hook "useCan" is called conditionally/],
  );
});

t.test('the code as it is passes', async (t) => {
  const [result] = await eslint.lintFiles([moduleOfCore]);
  t.same(result!.messages, []);
});
