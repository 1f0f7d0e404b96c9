import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

t.test('every file shown in CONTRIBUTING.md "Write your first plugin" is the fixture plugin, byte for byte', async (t) => {
  const guide = readFileSync(path.join(root, 'CONTRIBUTING.md'), 'utf8');
  const blocks = [...guide.matchAll(/```\w+ file=(\S+)\n([\s\S]*?)\n```/g)];
  t.same(
    blocks.map((b) => b[1]),
    [
      'test/fixtures/plugins/hello-orchestrator/package.json',
      'test/fixtures/plugins/hello-orchestrator/tsconfig.json',
      'test/fixtures/plugins/hello-orchestrator/src/index.ts',
    ],
    'the walkthrough shows the manifest, the TypeScript settings and the plugin',
  );
  for (const [, file, shown] of blocks) {
    t.equal(shown + '\n', readFileSync(path.join(root, file!), 'utf8'), `${file} matches the walkthrough`);
  }
});
