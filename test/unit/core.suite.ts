// The unit tests of sdk, core and host (test/unit/*.test.ts) in one process: see test/harness/in-process-suite.ts.
import { importTestFiles } from '../harness/in-process-suite.js';

await importTestFiles(['test/unit']);
