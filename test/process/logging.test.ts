import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What the root logger writes for one line in `format`, from a child process (the logger writes to stdout). */
function logLine(format: string, body = "createRootLogger('info', FORMAT).info({ job: 'ingest' }, 'hello operator');"): string {
  const script = `import('@agent-host/core').then(({ createRootLogger, requestScope }) => { ${body.replace('FORMAT', `'${format}'`)} })`;
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
    "const log = createRootLogger('info', FORMAT).child({ component: 'knowledge' }); requestScope.run({ requestId: 'req-42' }, async () => { await null; log.info('inside'); }); log.info('outside');",
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
