import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What the root logger writes for one line in `format`, from a child process (the logger writes to stdout). */
function logLine(format: string, body = "createRootLogger('info', FORMAT).info({ job: 'ingest' }, 'hello operator');"): string {
  const script = `import('@agent-host/core').then(async ({ createRootLogger, inRequestScope, currentRequestId }) => { ${body.replace('FORMAT', `'${format}'`)} })`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 20_000 }).stdout;
}

t.test('LOG_FORMAT json writes one JSON object a line, for log collectors', async (t) => {
  const line = JSON.parse(logLine('json').trim());
  t.match(line, { level: 30, msg: 'hello operator', job: 'ingest' });
});

t.test('LOG_FORMAT pretty writes a line a person can read', async (t) => {
  const out = logLine('pretty');
  t.match(out, /INFO.*hello operator/);
  t.match(out, /"job":"ingest"/, 'its fields on the same line');
  t.notMatch(out, /^\{"level"/, 'not JSON');
});

t.test('auto is JSON when standard output is not a terminal', async (t) => {
  t.doesNotThrow(() => JSON.parse(logLine('auto').trim()));
});

t.test('a line written while serving a request names the request, whichever logger writes it', async (t) => {
  const lines = logLine(
    'json',
    "const log = createRootLogger('info', FORMAT).child({ component: 'knowledge' }); inRequestScope('req-42', async () => { await null; log.info('inside'); }); log.info('outside');",
  )
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.match(
    lines.find((l) => l.msg === 'inside'),
    { req_id: 'req-42', component: 'knowledge' },
    'across an await, in a child logger',
  );
  t.notOk('req_id' in lines.find((l) => l.msg === 'outside'), 'work outside a request names none');
});

t.test('the request scope turns on promise hooks only while a scoped request runs', async (t) => {
  // After an await, a callback runs under an async id of its own only while promise hooks are on: they cost every
  // promise of the process, so work outside scoped requests (a streamed chat turn, background jobs) must run without.
  const lines = logLine(
    'json',
    `const log = createRootLogger('info', FORMAT);
     const { executionAsyncId } = await import('node:async_hooks');
     const hooks = async () => { await null; return executionAsyncId() === 0 ? 'off' : 'on'; };
     log.info({ hooks: await hooks() }, 'before any request');
     let endFirst;
     const first = inRequestScope('req-1', async () => {
       await new Promise((resolve) => (endFirst = resolve));
       log.info({ hooks: await hooks() }, 'first, after the second ended');
     });
     await inRequestScope('req-2', async () => log.info({ hooks: await hooks() }, 'second, beside the first'));
     log.info({ hooks: await hooks(), scoped: currentRequestId() ?? null }, 'outside, while the first runs');
     endFirst();
     await first;
     log.info({ hooks: await hooks() }, 'after both');
     await inRequestScope('req-3', async () => log.info({ hooks: await hooks() }, 'a later request'));
     log.info({ hooks: await hooks() }, 'after it');`.replaceAll('\n', ' '),
  )
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const seen = Object.fromEntries(lines.map((l) => [l.msg, l]));
  t.equal(seen['before any request']?.hooks, 'off', 'a process starts without them');
  t.match(seen['second, beside the first'], { hooks: 'on', req_id: 'req-2' });
  t.match(seen['outside, while the first runs'], { hooks: 'on', scoped: null }, 'on while another request runs, naming none');
  t.match(seen['first, after the second ended'], { hooks: 'on', req_id: 'req-1' }, 'a request ending does not end the scope of one still running');
  t.equal(seen['after both']?.hooks, 'off', 'off once no scoped request runs');
  t.match(seen['a later request'], { hooks: 'on', req_id: 'req-3' }, 'on again for the next');
  t.equal(seen['after it']?.hooks, 'off');
});
