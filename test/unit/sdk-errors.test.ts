import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentHostError, ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import t from 'tap';

const sdkDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sdk/dist');

t.test('errors from another copy of the SDK (an out-of-tree plugin installs its own) are recognised by class', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sdk-copy-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // errors.js imports nothing, so a copy of it alone is a second, independent set of classes.
  await copyFile(path.join(sdkDist, 'errors.js'), path.join(dir, 'errors.mjs'));
  const copy = (await import(pathToFileURL(path.join(dir, 'errors.mjs')).href)) as typeof import('@agent-host/sdk');
  t.not(copy.NotFoundError, NotFoundError, 'the copy is a different class');

  const vendorError = new copy.NotFoundError('order 42 not found');
  t.ok(vendorError instanceof NotFoundError, "a vendor's NotFoundError is the host's NotFoundError");
  t.ok(vendorError instanceof AgentHostError, 'and an AgentHostError, so the host answers its status');
  t.notOk(vendorError instanceof ConflictError, 'but not another kind');
  t.equal(vendorError.status, 404);
  t.ok(new copy.ValidationError([{ loc: ['body'], msg: 'bad', type: 'invalid' }]) instanceof ValidationError);
  t.notOk(new Error('plain') instanceof AgentHostError, 'a plain error is not one');
});
