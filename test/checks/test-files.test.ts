// `npm test` runs every test file once: the harness runs the files test/harness/test-files.ts lists, each in a process
// of its own, and the unit suites (test/unit/*.suite.ts) run the in-process files of test/unit and of each plugin's test
// folder. A test file in a folder neither reaches would never run.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '@agent-host/core';
import t from 'tap';
import { pluginTestDirs, testFilesIn } from '../harness/in-process-suite.js';
import { suiteFiles, testFilesUnder } from '../harness/test-files.js';

t.test('every test file runs in npm test, once: as a file of its own or in a unit suite', async (t) => {
  const listed = suiteFiles();
  t.equal(new Set(listed).size, listed.length, 'no file is listed twice');
  const runAlone = listed.filter((file) => file.endsWith('.test.ts'));
  const suites = listed.filter((file) => file.endsWith('.suite.ts'));
  t.same(suites.sort(), ['test/unit/core.suite.ts', 'test/unit/plugins-1.suite.ts', 'test/unit/plugins-2.suite.ts'], 'the suite runs the unit suites');
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
