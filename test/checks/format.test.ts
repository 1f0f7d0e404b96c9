// The format check `npm test` runs (Prettier with .prettierrc.json): an unformatted file fails it, naming the file, and
// the same code as Prettier lays it out passes.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const prettier = path.join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
const check = (file: string) => spawnSync(process.execPath, [prettier, '--config', path.join(root, '.prettierrc.json'), '--check', file], { encoding: 'utf8' });

t.test('an unformatted file fails the check, named; formatted, it passes', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-format-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'sloppy.ts');
  await writeFile(file, 'export const answer = {value:"forty-two",  list:[1,2,3]}\n');
  const sloppy = check(file);
  t.equal(sloppy.status, 1, 'the check fails');
  t.match(sloppy.stdout + sloppy.stderr, /sloppy\.ts/, 'and names the file');
  await writeFile(file, "export const answer = { value: 'forty-two', list: [1, 2, 3] };\n");
  t.equal(check(file).status, 0, 'the formatted file passes');
});
