import { createRootLogger } from '@agent-host/core';
import { prepareFerretDb } from './ferretdb.js';
const started = Date.now();
const bin = await prepareFerretDb(createRootLogger('info'));
console.log('BINARY', bin, Date.now() - started);
