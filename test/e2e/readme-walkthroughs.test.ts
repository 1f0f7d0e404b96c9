// Every README walkthrough runs as written: its shell blocks, in order, against a running host (the address and the
// printed password put in, as a reader would), from the repository root, so the files they name must exist.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The sections a reader follows against a running host, in the README's order (the two commands and the production
// recipe start processes of their own).
const SECTIONS = [
  'Logging in',
  'Chatting with an agent',
  'Knowledge',
  'Grounded answers',
  'Tools (MCP)',
  'Skills',
  'Scheduled tasks',
  'Evaluation',
  'Fusion agents and public API keys',
  'ETL jobs',
  'Document recognition',
];

async function walkthrough(): Promise<string> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  const sections = readme.split(/^#{2,3} /m);
  return SECTIONS.map((title) => {
    const section = sections.find((s) => s.startsWith(`${title}\n`));
    if (!section) throw new Error(`README has no section "${title}"`);
    return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
  }).join('\n');
}

t.test('the README walkthroughs run as written against a host', async (t) => {
  const host = await startTestHost(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'readme-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const script = (await walkthrough())
    .replaceAll('localhost:8080', host.url.replace(/^http:\/\//, ''))
    .replaceAll('<the printed password>', BOOTSTRAP_ADMIN.password)
    .replaceAll('<your password>', BOOTSTRAP_ADMIN.password)
    .replaceAll('"username":"admin"', `"username":"${BOOTSTRAP_ADMIN.username}"`)
    .replace(/(-[cb]) jar\b/g, `$1 ${path.join(dir, 'jar')}`)
    .replaceAll('headers.txt', path.join(dir, 'headers.txt'))
    // The reader waits a minute for the reminder; the test, two seconds.
    .replaceAll('Remind me in a minute', 'Remind me in 2 seconds');
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('bash', ['-euo', 'pipefail', '-c', script], { cwd: root, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  t.equal(code, 0, `every command succeeds${code ? `\n${stderr.slice(-2000)}` : ''}`);
  t.notMatch(stdout, /"detail":/, 'no command answered with an error body');
  t.notMatch(stdout, /"type":"error"/, 'no stream answered with an error event (the public client continues its issued session)');
  t.ok((stdout.match(/data: \{"type":"done","session_id":/g) ?? []).length >= 4, 'each streamed reply ends with done, naming its session');
  t.match(stdout, /^answer \[\{"kind": "chunk", "text": "[^"]*returned within 30 days.*"evidence_id": "E\d+"/m, 'the grounded answer cites the handbook');
  t.match(stdout, /"content":"sorry, "/, 'and refuses what it does not cover');
  t.match(stdout, /Echo: hello tools/, 'the MCP quick match called the echo tool');
  t.match(stdout, /"status":"success"/, 'tool and skill calls were audited as successes');
  t.match(stdout, /Scheduled: I will remind you to send the stand-up notes/, 'the chat scheduled the reminder');
  t.match(stdout, /"execution_state":"succeeded"/, 'the reminder ran');
  t.match(stdout, /"content":"Your "/, 'the chat listed the reminders');
  t.match(stdout, /"expression":"0 9 \* \* 1-5"[^\n]*"status":"cancelled"/, 'and the weekday reminder was cancelled');
  t.match(stdout, /"execution_state":"completed"[^\n]*"items_completed":4/, 'the evaluation run scored every item');
  t.match(stdout, /"rule_score":\{"token_f1":[\d.]+,"pass_rate":[01],"exact_match":[01],/, 'each answer has a rule score');
  t.match(stdout, /"judge_status":"scored"/, 'and a judge score');
  t.match(stdout, /"by_domain":\[\{"value":"history"/, 'the run was sliced by domain');
  t.match(stdout, /"passed":(true|false),"policy":\{"minimum_items":1,"score_pass_rate_min":0\.5,/, 'the gate kept a verdict with the policy it used');
  t.match(stdout, /\}position,item_id,question,expected_answers,predicted_answer,/, "the results came as CSV, right after the gate's JSON");
  t.match(
    stdout,
    /"status":"succeeded"[^\n]*"json_value":\{"date":"2026-11-02","name":"Acme Ltd","total":129\.5\}[^\n]*"caller_token":null/,
    'the public Fusion run with the key extracted the fields',
  );
  t.match(
    stdout,
    /"channel":"public"[^\n]*"authenticated_agent_api_key_id":"[0-9a-f-]{36}"[^\n]*"governance_context":/,
    'and the administrator reads it with its key',
  );
  t.match(
    stdout,
    /name,email,signup_date\nAda Lovelace,ada@example\.com,2025-12-10\n"Hopper, Grace",GRACE@EXAMPLE\.COM,2026-01-25\nAlan Turing,alan@example\.com,\n/,
    'the ETL output has the target columns, ISO dates, and the rejected row left out',
  );
  t.match(stdout, /"planned_by":\s*"deterministic"[\s\S]*"rows_rejected":\s*1/, 'and the report says how');
  t.match(stdout, /"runtime_agent_id":"[0-9a-f-]{36}"[^\n]*"upload_slot":\{"slot":"document"/, 'the runtime agent was registered');
  t.match(
    stdout,
    /invoice_number "INV-2026-0042" page 1\nvendor "Acme Supplies Ltd" page 1\ndue_date "2026-12-31" page 1\ntotal 1250 page 1\n/,
    'the invoice fields',
  );
  t.match(stdout, /"current_value":"Acme Supplies GmbH"[^\n]*"review_status":"corrected"[^\n]*"revision_count":1/, 'the correction');
  t.match(stdout, /"history_status":"recorded"[^\n]*"revisions":\[\{[^\n]*"previous_value":"Acme Supplies Ltd"/, 'and its revision');
  t.match(stdout, /"field_scores":\[[^\n]*"Acme Supplies GmbH"[^\n]*"predicted":"Acme Supplies Ltd","exact_match":false/, 'the evaluation scored each field');
});
