// Runs many tap files in one process: each file's tests join the one root test, in file order. A Node process with tsx
// takes over a second to start and import the host's modules, which was most of the time of the small files of the
// unit suites. A file still runs alone (`node --import tsx <file>`), and tap names the file of a failing assertion.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '@agent-host/core';

/** Every `*.test.ts` directly in each of `dirs` (relative to the repository, as the results are), in name order. */
export const testFilesIn = (dirs: string[]): string[] =>
  dirs.flatMap((dir) =>
    readdirSync(path.join(PROJECT_ROOT, dir))
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => path.join(dir, name)),
  );

/** Imports the test files of `dirs` (see {@link testFilesIn}) one after another. */
export async function importTestFiles(dirs: string[]): Promise<void> {
  for (const file of testFilesIn(dirs)) await import(pathToFileURL(path.join(PROJECT_ROOT, file)).href);
}

/** Each plugin's folder of in-process tests, `plugins/<id>/test`, in name order. */
export const pluginTestDirs = (): string[] =>
  readdirSync(path.join(PROJECT_ROOT, 'plugins'))
    .sort()
    .map((id) => path.join('plugins', id, 'test'))
    .filter((dir) => existsSync(path.join(PROJECT_ROOT, dir)));
