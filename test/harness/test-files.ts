// The files `npm test` runs, each in a process of its own (test/harness/test-processes.ts): the unit suites, which
// import the in-process files of test/unit and of each plugin's test folder (test/harness/in-process-suite.ts), and
// every test file of the folders whose tests need servers or processes of their own.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '@agent-host/core';

/** Every `*.test.ts` under `dir` (relative to the repository), in name order; none when there is no such folder. */
export function testFilesUnder(dir: string): string[] {
  if (!existsSync(path.join(PROJECT_ROOT, dir))) return [];
  return readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const relative = path.join(dir, entry.name);
      if (entry.isDirectory()) return testFilesUnder(relative);
      return entry.name.endsWith('.test.ts') ? [relative] : [];
    });
}

/**
 * The files of the whole suite, in the order they start: the slowest kinds first (host processes, the browser, the
 * shared servers), so that the last files to finish, while fewer run at once, are short ones.
 */
export function suiteFiles(): string[] {
  const plugins = readdirSync(path.join(PROJECT_ROOT, 'plugins')).sort();
  // A plugin's sub-folders of test/ hold the tests that need a process of their own; its top level is in a suite.
  const pluginProcessTests = plugins.flatMap((id) => {
    const dir = path.join('plugins', id, 'test');
    if (!existsSync(path.join(PROJECT_ROOT, dir))) return [];
    return readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry) => testFilesUnder(path.join(dir, entry.name)));
  });
  const suites = readdirSync(path.join(PROJECT_ROOT, 'test', 'unit'))
    .filter((name) => name.endsWith('.suite.ts'))
    .sort()
    .map((name) => path.join('test', 'unit', name));
  return [
    ...['test/e2e', 'test/browser', 'test/integration'].flatMap(testFilesUnder),
    ...pluginProcessTests,
    ...suites,
    ...['test/process', 'test/checks', 'test/typed'].flatMap(testFilesUnder),
  ];
}
