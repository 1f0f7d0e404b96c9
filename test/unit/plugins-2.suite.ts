// The in-process tests of the second half of the plugins, in name order (plugins/<id>/test/*.test.ts), in one process;
// plugins-1.suite.ts runs the first half beside it. See test/harness/in-process-suite.ts.
import { importTestFiles, pluginTestDirs } from '../harness/in-process-suite.js';

const dirs = pluginTestDirs();
await importTestFiles(dirs.slice(Math.ceil(dirs.length / 2)));
