// The in-process tests of the first half of the plugins, in name order (plugins/<id>/test/*.test.ts), in one process;
// plugins-2.suite.ts runs the other half beside it. See test/harness/in-process-suite.ts.
import { importTestFiles, pluginTestDirs } from '../harness/in-process-suite.js';

const dirs = pluginTestDirs();
await importTestFiles(dirs.slice(0, Math.ceil(dirs.length / 2)));
