// `npm test` runs every test file once: tap runs the files its include patterns (.taprc) list, each in a process of
// its own, and the unit suites (test/unit/*.suite.ts) run the in-process files of test/unit and of each plugin's test
// folder. A test file in a folder neither reaches would never run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '@agent-host/core';
import t from 'tap';
import { pluginTestDirs, testFilesIn } from '../harness/in-process-suite.js';

/** Every `*.test.ts` under `dir` (relative to the repository, as the results are), none when there is no such folder. */
function testFilesUnder(dir: string): string[] {
  if (!existsSync(path.join(PROJECT_ROOT, dir))) return [];
  return readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFilesUnder(relative);
    return entry.name.endsWith('.test.ts') ? [relative] : [];
  });
}

t.test('every test file runs in npm test, once: as a file of its own or in a unit suite', async (t) => {
  const listed = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), 'list'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  });
  t.equal(listed.status, 0, listed.stderr);
  const runAlone = listed.stdout.split('\n').filter((line) => line.endsWith('.test.ts'));
  const suites = listed.stdout.split('\n').filter((line) => line.endsWith('.suite.ts'));
  t.same(suites.sort(), ['test/unit/core.suite.ts', 'test/unit/plugins-1.suite.ts', 'test/unit/plugins-2.suite.ts'], 'tap runs the unit suites');
  const inSuites = testFilesIn(['test/unit', ...pluginTestDirs()]);
  t.same(
    runAlone.filter((file) => inSuites.includes(file)),
    [],
    'no file runs both alone and in a suite',
  );
  const onDisk = [
    ...testFilesUnder('test'),
    ...readdirSync(path.join(PROJECT_ROOT, 'plugins')).flatMap((id) => testFilesUnder(path.join('plugins', id, 'test'))),
  ];
  t.same([...runAlone, ...inSuites].sort(), onDisk.sort(), 'every test file on disk runs');
  t.ok(inSuites.includes('test/unit/conformance.test.ts') && inSuites.includes('plugins/tools-mcp/test/plugin.test.ts'), 'the suites hold the unit files');
});
