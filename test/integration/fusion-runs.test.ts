// Fusion runs and public API keys (spec 2.9, 4.11, 5.7, issue 22): a definition validated on write, runs on the
// draft and on the published version through fusion_llm on the offline model, the public routes with their access
// modes, key lifecycle and ownership rules, file inputs over multipart; over the OpenAI wire protocol, an answer that
// matches its schema, one repaired once, one that never matches, and one past the model timeout.
import t from 'tap';
import { startOpenAiFixture, lastUserText, type FixtureReply } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const FIELDS_SCHEMA = {
  type: 'object',
  required: ['name', 'date', 'total'],
  additionalProperties: false,
  properties: { name: { type: 'string' }, date: { type: 'string', format: 'date' }, total: { type: 'number' } },
};

const DEFINITION = {
  instructions: 'Extract the invoice fields.',
  input_slots: [
    { name: 'invoice_text', kind: 'text' },
    { name: 'note', kind: 'text', required: false },
  ],
  output_slots: [
    { name: 'summary', kind: 'text' },
    { name: 'fields', kind: 'structured_json', structured_output_schema: FIELDS_SCHEMA, output_instruction_fragment: 'Dates as YYYY-MM-DD.' },
  ],
};

const INVOICE = 'Invoice 17\nname: Acme Ltd\ndate: 2026-11-02\ntotal: 129.50 EUR';

t.test('offline: definition rules, draft and published runs, public access by key and by caller token, file inputs', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const anonymous = () => new AdminClient(host.url);

  // The definition is validated on write, each problem named.
  const refused = async (definition: unknown, loc: (string | number)[]) => {
    const answer = await admin.request('POST', '/agents', { name: 'Bad', agent_type: 'fusion', fusion_definition: definition });
    t.equal(answer.status, 422, `refused: ${loc.join('.')}`);
    t.ok(
      answer.body.detail.some((d: any) => JSON.stringify(d.loc) === JSON.stringify(['body', 'fusion_definition', ...loc])),
      `${JSON.stringify(answer.body.detail)} names ${loc.join('.')}`,
    );
  };
  await refused({ ...DEFINITION, output_slots: [{ name: 'x', kind: 'structured_json', structured_output_schema: { type: 'nonsense' } }] }, [
    'output_slots',
    0,
    'structured_output_schema',
  ]);
  await refused({ ...DEFINITION, output_slots: [{ name: 'x', kind: 'text', structured_output_profile: 'document_field_set' }] }, [
    'output_slots',
    0,
    'structured_output_profile',
  ]);
  await refused({ ...DEFINITION, input_slots: [DEFINITION.input_slots[0], { name: 'invoice_text', kind: 'file' }] }, ['input_slots', 1, 'name']);
  await refused({ ...DEFINITION, runtime_key: 'nope' }, ['runtime_key']);
  await refused({ ...DEFINITION, output_slots: [{ name: 'x', kind: 'structured_json', structured_output_profile: 'document_field_set' }] }, [
    'output_slots',
    0,
    'structured_output_profile',
  ]);
  const onChat = await admin.request('POST', '/agents', { name: 'Chat', agent_type: 'chat', fusion_definition: DEFINITION });
  t.match(onChat, { status: 422, body: { detail: [{ loc: ['body', 'fusion_definition'] }] } }, 'only fusion agents take a definition');

  const agent = (await admin.request('POST', '/agents', { name: 'Invoices', agent_type: 'fusion' })).body;
  const id = agent.agent_id;
  t.match(await admin.request('POST', `/agents/${id}/fusion-runs`, { inputs: { invoice_text: INVOICE } }), {
    status: 409,
    body: { code: 'FUSION_DEFINITION_MISSING' },
  });
  t.match(await admin.request('POST', `/agents/${id}/publish`), { status: 409, body: { code: 'AGENT_NOT_PUBLISHABLE' } }, 'nothing to publish yet');
  const defined = await admin.request('PATCH', `/agents/${id}`, { fusion_definition: DEFINITION });
  t.equal(defined.status, 200);
  t.match(defined.body.fusion_definition, { runtime_key: 'fusion_llm', input_slots: [{ name: 'invoice_text', required: true }] }, 'stored with defaults');

  // An administrator runs the draft.
  const draft = await admin.request('POST', `/agents/${id}/fusion-runs`, { inputs: { invoice_text: INVOICE } });
  t.equal(draft.status, 201);
  t.match(draft.body, {
    status: 'succeeded',
    agent_version_id: null,
    channel: 'admin',
    attempt_count: 1,
    lease_token: null,
    output_item_list: [
      { slot: 'summary', kind: 'text', json_value: 'Invoice 17' },
      { slot: 'fields', kind: 'structured_json', json_value: { name: 'Acme Ltd', date: '2026-11-02', total: 129.5 } },
    ],
    error: null,
    generation_usage: { token_usage_source: 'tokenizer_estimated' },
    governance_context: {
      definition_source: 'draft',
      runtime_key: 'fusion_llm',
      model_binding: { model_provider: 'offline', model_temperature: 0, source: 'global_fallback' },
      attempts: [{ validation_errors: [] }],
    },
  });
  t.match(draft.body.governance_context.prompt_messages[0].content, /Extract the invoice fields\.[\s\S]*Dates as YYYY-MM-DD\./);
  t.match(draft.body.governance_context.model_raw_response, /"total":129.5/);
  t.equal(draft.body.trace_id.length, 32);
  const missing = await admin.request('POST', `/agents/${id}/fusion-runs`, { inputs: { note: 'x', extra: 'y' } });
  t.equal(missing.status, 422);
  t.same(missing.body.detail.map((d: any) => d.loc.join('.')).sort(), ['body.inputs.extra', 'body.inputs.invoice_text'], 'every problem, named');
  const listed = (await admin.request('GET', `/agents/${id}/fusion-runs`)).body;
  t.equal(listed.items.length, 1, 'a refused run is not stored');

  // Public routes: closed while admin_only, then 409 until something is published.
  const caller = anonymous();
  t.match(await caller.request('GET', `/public/agents/${id}/fusion-runtime`), { status: 404, body: { code: 'AGENT_NOT_FOUND' } });
  await admin.request('PATCH', `/agents/${id}`, { public_access_mode: 'public_api_key' });
  const key = await admin.request('POST', `/agents/${id}/public-api-keys`, { label: 'billing' });
  t.equal(key.status, 201);
  t.match(key.body, { label: 'billing', prefix: /^ahk_/, revoked: false, last_used_at: null, api_key: /^ahk_/ });
  const header = (k: string) => ({ 'x-agent-api-key': k });
  t.match(await caller.request('GET', `/public/agents/${id}/fusion-runtime`, undefined, header(key.body.api_key)), {
    status: 409,
    body: { code: 'FUSION_NOT_PUBLISHED' },
  });
  const published = (await admin.request('POST', `/agents/${id}/publish`)).body;
  const versionId = published.published_agent_version_id;
  // The draft changes after publishing; public callers still run the published version.
  await admin.request('PATCH', `/agents/${id}`, { fusion_definition: { ...DEFINITION, instructions: 'DRAFT ONLY' } });

  const runtime = await caller.request('GET', `/public/agents/${id}/fusion-runtime`, undefined, header(key.body.api_key));
  t.match(runtime.body, { published_agent_version_id: versionId, input_slots: [{ name: 'invoice_text' }, { name: 'note' }] });
  t.notOk(JSON.stringify(runtime.body).includes('Dates as YYYY-MM-DD'), 'no instruction fragment or prompt in the public metadata');

  for (const [what, headers] of [
    ['no key', {}],
    ['a malformed key', header('nope')],
    ['an unknown key', header(key.body.api_key.slice(0, -4) + 'AAAA')],
  ] as const) {
    t.match(
      await caller.request('POST', `/public/agents/${id}/fusion-runs`, { inputs: { invoice_text: INVOICE } }, headers),
      {
        status: 401,
        body: { code: 'PUBLIC_API_KEY_INVALID' },
      },
      `${what}: 401`,
    );
  }
  const run = await caller.request(
    'POST',
    `/public/agents/${id}/fusion-runs`,
    { inputs: { invoice_text: INVOICE }, agent_version_id: versionId },
    header(key.body.api_key),
  );
  t.equal(run.status, 201);
  t.match(run.body, { status: 'succeeded', agent_version_id: versionId, caller_token: null, output_item_list: [{}, { json_value: { total: 129.5 } }] });
  for (const field of ['governance_context', 'trace_id', 'trace_url', 'prompt_messages', 'model_raw_response', 'authenticated_agent_api_key_id'])
    t.notOk(field in run.body, `no ${field} in a public answer`);
  const asAdmin = (await admin.request('GET', `/agents/${id}/fusion-runs/${run.body.run_id}`)).body;
  t.match(asAdmin, { channel: 'public', authenticated_agent_api_key_id: key.body.key_id, governance_context: { definition_source: 'published_version' } });
  t.notMatch(asAdmin.governance_context.prompt_messages[0].content, /DRAFT ONLY/, 'the published definition ran, not the draft');
  t.match(
    await caller.request(
      'POST',
      `/public/agents/${id}/fusion-runs`,
      { inputs: { invoice_text: INVOICE }, agent_version_id: draft.body.run_id },
      header(key.body.api_key),
    ),
    { status: 409, body: { code: 'FUSION_VERSION_NOT_CURRENT' } },
  );

  // Another key reads none of the first key's runs.
  const other = (await admin.request('POST', `/agents/${id}/public-api-keys`, { label: 'other' })).body;
  t.match(await caller.request('GET', `/public/agents/${id}/fusion-runs/${run.body.run_id}`, undefined, header(other.api_key)), {
    status: 404,
    body: { code: 'FUSION_RUN_NOT_FOUND' },
  });
  t.equal((await caller.request('GET', `/public/agents/${id}/fusion-runs`, undefined, header(other.api_key))).body.items.length, 0);
  const mine = await caller.request('GET', `/public/agents/${id}/fusion-runs`, undefined, header(key.body.api_key));
  t.same(
    mine.body.items.map((r: any) => r.run_id),
    [run.body.run_id],
  );

  // Keys: listed without plaintext, last use recorded, revocation at once, audited.
  const keys = (await admin.request('GET', `/agents/${id}/public-api-keys`)).body.items;
  t.equal(keys.length, 2);
  t.notOk(JSON.stringify(keys).includes(key.body.api_key), 'the key is never shown again');
  t.type(keys.find((k: any) => k.key_id === key.body.key_id).last_used_at, 'string');
  const [stored] = await query(host.databaseUrl, 'SELECT token_hash FROM agent_public_api_keys WHERE id = $1', [key.body.key_id]);
  t.equal(stored!.token_hash.length, 64, 'stored as a SHA-256');
  t.match((await admin.request('POST', `/agents/${id}/public-api-keys/${key.body.key_id}/revoke`)).body, { revoked: true });
  t.match(await caller.request('GET', `/public/agents/${id}/fusion-runs`, undefined, header(key.body.api_key)), {
    status: 401,
    body: { detail: /revoked/ },
  });
  const audited = await query(host.databaseUrl, "SELECT action FROM admin_action_audits WHERE action LIKE 'agent_public_api_key.%' ORDER BY created_at");
  t.same(
    audited.map((r) => r.action),
    ['agent_public_api_key.create', 'agent_public_api_key.create', 'agent_public_api_key.revoke'],
  );
  const expired = await admin.request('POST', `/agents/${id}/public-api-keys`, { label: 'old', expires_at: '2020-01-01T00:00:00Z' });
  t.match(expired, { status: 422, body: { detail: [{ loc: ['body', 'expires_at'] }] } });

  // Anonymous access: each caller reads only the runs made under its caller token.
  await admin.request('PATCH', `/agents/${id}`, { public_access_mode: 'public_anonymous' });
  const first = await caller.request('POST', `/public/agents/${id}/fusion-runs`, { inputs: { invoice_text: INVOICE } });
  t.match(first.body, { status: 'succeeded', caller_token: /^[A-Za-z0-9_-]{43}$/ });
  const token = { 'x-caller-token': first.body.caller_token };
  t.equal((await caller.request('GET', `/public/agents/${id}/fusion-runs/${first.body.run_id}`, undefined, token)).status, 200);
  t.equal((await caller.request('GET', `/public/agents/${id}/fusion-runs/${first.body.run_id}`)).status, 404, 'without the token: not found');
  const stranger = { 'x-caller-token': 'x'.repeat(43) };
  t.equal((await caller.request('GET', `/public/agents/${id}/fusion-runs/${first.body.run_id}`, undefined, stranger)).status, 404);
  t.equal(
    (await caller.request('GET', `/public/agents/${id}/fusion-runs/${run.body.run_id}`, undefined, token)).status,
    404,
    "a key's run is not the caller's",
  );

  // File inputs over multipart: stored, read by the runtime as text, downloadable; size and type limits per slot.
  await admin.request('PATCH', `/agents/${id}`, {
    fusion_definition: {
      ...DEFINITION,
      input_slots: [{ name: 'invoice_file', kind: 'file', accepted_content_types: ['text/*'], max_size_bytes: 200 }],
    },
  });
  await admin.request('POST', `/agents/${id}/publish`);
  const form = (content: string, type: string) => {
    const data = new FormData();
    data.append('invoice_file', new Blob([content], { type }), 'invoice.txt');
    return data;
  };
  const filed = await caller.request('POST', `/public/agents/${id}/fusion-runs`, form(INVOICE, 'text/plain'), token);
  t.equal(filed.status, 201);
  t.match(filed.body, { status: 'succeeded', inputs: [{ slot: 'invoice_file', kind: 'file', filename: 'invoice.txt', size_bytes: INVOICE.length }] });
  t.match(filed.body.output_item_list[1].json_value, { name: 'Acme Ltd', total: 129.5 }, 'the file text reached the model');
  const download = await fetch(host.url + filed.body.inputs[0].download_url, { headers: token });
  t.equal(download.status, 200);
  t.equal(await download.text(), INVOICE);
  t.equal((await fetch(host.url + filed.body.inputs[0].download_url)).status, 404, 'another caller cannot download it');
  t.match(await caller.request('POST', `/public/agents/${id}/fusion-runs`, form('x'.repeat(201), 'text/plain'), token), {
    status: 413,
    body: { code: 'FUSION_INPUT_TOO_LARGE' },
  });
  t.match(await caller.request('POST', `/public/agents/${id}/fusion-runs`, form('%PDF-1.4', 'application/pdf'), token), {
    status: 415,
    body: { code: 'FUSION_INPUT_TYPE' },
  });
  t.match(await caller.request('POST', `/public/agents/${id}/fusion-runs`, { inputs: { invoice_file: 'text' } }, token), {
    status: 422,
    body: { detail: [{ loc: ['body', 'inputs', 'invoice_file'], msg: /multipart/ }] },
  });
  const objects = await query(host.databaseUrl, "SELECT count(*)::int AS n FROM fusion_runs WHERE agent_id = $1 AND inputs::text LIKE '%invoice_file%'", [id]);
  t.equal(objects[0]!.n, 1, 'refused uploads store no run');

  // agent_type cannot change while a run of the agent has not ended.
  await query(host.databaseUrl, "UPDATE fusion_runs SET status = 'queued' WHERE id = $1", [filed.body.run_id]);
  t.match(await admin.request('PATCH', `/agents/${id}`, { agent_type: 'etl' }), { status: 409, body: { code: 'AGENT_TYPE_CHANGE_REFUSED' } });
});

t.test('over the OpenAI protocol: a valid answer, one repaired once, one never valid, one past the model timeout', async (t) => {
  const valid = { summary: 'An invoice', fields: { name: 'Acme', date: '2026-11-02', total: 12.5 } };
  const invalid = { summary: 'An invoice', fields: { name: 'Acme', date: 'yesterday', total: 'twelve' } };
  let repairAsked = 0;
  const fixture = await startOpenAiFixture({
    respond: (body): FixtureReply => {
      const text = body.messages.map((m: any) => String(m.content)).join('\n');
      if (text.includes('CASE slow')) return { content: JSON.stringify(valid), delayMs: 3_000 };
      if (text.includes('CASE never')) return { content: JSON.stringify(invalid) };
      if (text.includes('CASE repair')) {
        if (!lastUserText(body).includes('That answer was refused')) return { content: JSON.stringify(invalid) };
        repairAsked++;
        return { content: JSON.stringify(valid) };
      }
      return { content: JSON.stringify(valid) };
    },
  });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, {
    env: {
      'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`,
      AGENT_HOST__TIMEOUTS__MODEL_REQUEST_SECONDS: '1',
      AGENT_HOST__FUSION__API_KEY_REQUESTS_PER_MINUTE: '2',
      AGENT_HOST__FUSION__ANONYMOUS_RUNS_PER_MINUTE: '1',
    },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Invoices',
      agent_type: 'fusion',
      model_name: 'gpt-4o-mini',
      model_provider: 'openai',
      fusion_definition: DEFINITION,
    })
  ).body;
  const runOn = (text: string) => admin.request('POST', `/agents/${agent.agent_id}/fusion-runs`, { inputs: { invoice_text: text } });

  const ok = (await runOn('CASE ok')).body;
  t.match(ok, {
    status: 'succeeded',
    output_item_list: [{ json_value: 'An invoice' }, { json_value: valid.fields }],
    generation_usage: { token_usage_source: 'provider_reported' },
    estimated_cost: { estimated_interaction_count: 1, missing_pricing_count: 0 },
    governance_context: { model_binding: { model_name: 'gpt-4o-mini', model_provider: 'openai', model_temperature: 0, source: 'agent' } },
  });
  const request = fixture.requests.at(-1)!.body;
  t.equal(request.temperature, 0, 'no temperature anywhere: 0.0');
  t.equal(request.response_format?.json_schema?.name, 'fusion_output', 'asked as structured output');

  const repaired = (await runOn('CASE repair')).body;
  t.match(repaired, { status: 'succeeded', governance_context: { attempts: [{ validation_errors: [/date/] }, { validation_errors: [] }] } });
  t.equal(repairAsked, 1, 'the repair carried the validation errors');
  t.match(repaired.generation_usage, { token_usage_source: 'provider_reported' });

  const never = (await runOn('CASE never')).body;
  t.match(never, { status: 'failed', output_item_list: null, error: { code: 'FUSION_OUTPUT_INVALID' } });
  t.ok(
    never.error.validation_errors.some((e: string) => /fields.*total.*must be number/.test(e)),
    `the schema errors are kept: ${JSON.stringify(never.error.validation_errors)}`,
  );
  t.equal(never.governance_context.attempts.length, 2, 'one repair attempt, no more');

  const slow = (await runOn('CASE slow')).body;
  t.match(slow, { status: 'failed', error: { code: 'FUSION_RUNTIME_FAILED', message: /time/i } });

  // wait_seconds=0 answers before the run ends; the run is read later.
  const early = await admin.request('POST', `/agents/${agent.agent_id}/fusion-runs?wait_seconds=0`, { inputs: { invoice_text: 'CASE ok' } });
  t.match(early.body, { status: /^(queued|running)$/, completed_at: null });
  let later = early.body;
  for (let i = 0; i < 50 && later.status !== 'succeeded'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    later = (await admin.request('GET', `/agents/${agent.agent_id}/fusion-runs/${early.body.run_id}`)).body;
  }
  t.match(later, { status: 'succeeded', attempt_count: 1 });

  // A run stored without a governance context (as before it existed) gets one filled back from its own columns.
  await query(host.databaseUrl, 'UPDATE fusion_runs SET governance_context = NULL WHERE id = $1', [ok.run_id]);
  t.match((await admin.request('GET', `/agents/${agent.agent_id}/fusion-runs/${ok.run_id}`)).body.governance_context, {
    filled_back: true,
    definition_source: 'draft',
    model_binding: { model_name: 'gpt-4o-mini', model_temperature: 0 },
    prompt_messages: null,
    trace_id: ok.trace_id,
    usage: { token_usage_source: 'provider_reported' },
  });

  // Budgets per key and per anonymous address, counted in Postgres: past them, 429 with Retry-After.
  await admin.request('PATCH', `/agents/${agent.agent_id}`, { public_access_mode: 'public_api_key' });
  await admin.request('POST', `/agents/${agent.agent_id}/publish`);
  const { api_key: key } = (await admin.request('POST', `/agents/${agent.agent_id}/public-api-keys`, { label: 'limited' })).body;
  const caller = new AdminClient(host.url);
  const publicRun = (headers: Record<string, string> = {}) =>
    caller.request('POST', `/public/agents/${agent.agent_id}/fusion-runs`, { inputs: { invoice_text: 'CASE ok' } }, headers);
  t.same([(await publicRun({ 'x-agent-api-key': key })).status, (await publicRun({ 'x-agent-api-key': key })).status], [201, 201]);
  const limited = await publicRun({ 'x-agent-api-key': key });
  t.match(limited, { status: 429, body: { detail: /2 requests a minute per API key/ } });
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'with Retry-After');
  await admin.request('PATCH', `/agents/${agent.agent_id}`, { public_access_mode: 'public_anonymous' });
  t.equal((await publicRun()).status, 201);
  t.match(await publicRun(), { status: 429, body: { detail: /1 Fusion runs a minute from one address/ } });
});
