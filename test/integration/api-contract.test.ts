// The contract test of issue 15: every operation of /openapi.json is called at least once and answers its
// documented success; the contract check of every AdminClient and stream call (test/helpers/contract.ts) validates
// each real body (and each event of the stream) against the document, so a missing or wrong schema fails here.
import t from 'tap';
import { buildOpenApiDocument, createServer, type OpenApiDocument } from '@agent-host/host';
import { everythingStdio } from '../fixtures/mcp/clients.js';
import { lastUserText, startOpenAiFixture } from '../fixtures/openai-server.js';
import { challengeHeader } from '../helpers/admins.js';
import { answeredOperations } from '../helpers/contract.js';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { createSource, ingest, uploadOk, waitForJob } from '../helpers/knowledge.js';
import { waitFor } from '../helpers/job-counter.js';

t.test('every operation of /openapi.json answers its documented success, with a body the document describes', async (t) => {
  let slow = false;
  const model = await startOpenAiFixture({
    respond: (body) => ({ chunks: ['Noted: ', ...lastUserText(body).split(/(?<= )/)], chunkDelayMs: slow ? 300 : 0 }),
  });
  t.teardown(() => model.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"` } });
  const admin = new AdminClient(host.url);
  const document: OpenApiDocument = buildOpenApiDocument(createServer(host.app).routes);

  /** Calls an operation as `admin` (or `as`) and expects its documented success status. */
  const call = async (
    operation: string,
    params: Record<string, string> = {},
    body?: unknown,
    options: { headers?: Record<string, string>; as?: AdminClient } = {},
  ) => {
    const [method, template] = operation.split(' ') as [string, string];
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (params[name] === undefined) throw new Error(`${operation}: no ${name}`);
      return name === 'key' ? params[name] : encodeURIComponent(params[name]);
    });
    const client = options.as ?? admin;
    // The stream helper reads the events and checks each against the document.
    const response = template === '/stream' ? await client.stream(body) : await client.request(method, path, body, options.headers);
    const success = Object.keys(document.paths[template]![method.toLowerCase()]!.responses as Record<string, unknown>).find((s) => s.startsWith('2'));
    if (String(response.status) !== success) throw new Error(`${operation} answered ${response.status}, not ${success}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const challenged = async (as = admin, password = BOOTSTRAP_ADMIN.password) => ({ headers: await challengeHeader(as, password), as });

  // Meta and the session.
  await call('GET /healthz');
  await call('GET /readyz');
  await call('GET /models');
  await call('POST /admin/auth/login', {}, { username: BOOTSTRAP_ADMIN.username, password: BOOTSTRAP_ADMIN.password });
  t.same((await admin.request('GET', '/openapi.json')).body, document, 'the host serves the document the contract check uses');
  await call('POST /admin/auth/refresh');
  await call('GET /admin/auth/me');
  await call('GET /admin/permission-catalog');
  await call('GET /chat-orchestrators');
  await call('GET /release-metadata');
  await call('GET /plugins');
  const challenge = await call('POST /admin/auth/challenges');
  await call(
    'POST /admin/auth/challenges/{challenge_id}/verify',
    { challenge_id: challenge.challenge_id },
    { nonce: challenge.nonce, password: BOOTSTRAP_ADMIN.password },
  );
  await call('GET /admin/system-settings');
  await call('PATCH /admin/system-settings/{config_key}', { config_key: 'agent.system_prompt_max_length' }, { value: 20_000 }, await challenged());

  // API tokens.
  const token = await call('POST /admin/api-tokens', {}, { name: 'contract' }, await challenged());
  await call('GET /admin/api-tokens');
  await call('DELETE /admin/api-tokens/{token_id}', { token_id: token.token_id });

  // Administrators.
  await call('GET /admin/admin-users');
  const user = await call('POST /admin/admin-users', {}, { username: 'contract-user', password: 'contract-password-1' }, await challenged());
  const userId = { admin_user_id: user.admin_user_id };
  await call('GET /admin/admin-users/{admin_user_id}', userId);
  await call('PATCH /admin/admin-users/{admin_user_id}', userId, { display_name: 'Contract user' }, await challenged());
  const granted = await call('POST /admin/admin-users/{admin_user_id}/permissions', userId, { permission_codes: ['agents.read'] }, await challenged());
  await call(
    'DELETE /admin/admin-users/{admin_user_id}/permissions/{grant_id}',
    { ...userId, grant_id: granted.grants[0].grant_id },
    undefined,
    await challenged(),
  );
  await call('POST /admin/admin-users/{admin_user_id}/password-reset', userId, { new_password: 'contract-password-2' }, await challenged());
  await call('DELETE /admin/admin-users/{admin_user_id}', userId, undefined, await challenged());

  // MCP: a credential, the reference server, its checks.
  const credential = await call('POST /mcp-credentials', {}, { name: 'Contract key', secret_payload: { access_token: 'contract-secret' } });
  const credentialId = { credential_id: credential.credential_id };
  await call('GET /mcp-credentials');
  await call('GET /mcp-credentials/{credential_id}', credentialId);
  await call('PATCH /mcp-credentials/{credential_id}', credentialId, { description: 'for the contract test' });
  await call('POST /mcp-credentials/{credential_id}/rotate', credentialId, { secret_payload: { access_token: 'contract-secret-2' } });
  await call('DELETE /mcp-credentials/{credential_id}', credentialId);
  const server = await call('POST /mcp-servers', {}, { name: 'Everything', transport_type: 'stdio', connection_config: everythingStdio() });
  const serverId = { mcp_server_id: server.mcp_server_id };
  await call('GET /mcp-servers');
  await call('GET /mcp-servers/{mcp_server_id}', serverId);
  await call('PATCH /mcp-servers/{mcp_server_id}', serverId, { description: 'the reference server' });
  await call('POST /mcp-servers/{mcp_server_id}/health-check', serverId);
  await call('POST /mcp-servers/{mcp_server_id}/test-call', serverId, { action: 'tools/list' });
  const spare = await call('POST /mcp-servers', {}, { name: 'Spare', transport_type: 'stdio', connection_config: everythingStdio() });
  await call('DELETE /mcp-servers/{mcp_server_id}', { mcp_server_id: spare.mcp_server_id });

  // Agents.
  const chatModel = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
  const agent = await call(
    'POST /agents',
    {},
    { name: 'Contract desk', agent_type: 'chat', public_access_mode: 'public_anonymous', human_takeover_enabled: true, ...chatModel },
  );
  const agentId = { agent_id: agent.agent_id };
  await call('GET /agents');
  await call('GET /agents/{agent_id}', agentId);
  await call('PATCH /agents/{agent_id}', agentId, {
    description: 'answers the contract test',
    mcp_response_config: { quick_match_rules: [{ prefix: '/echo', mcp_server_id: server.mcp_server_id, tool_name: 'echo', suffix_parameter_name: 'message' }] },
  });
  const version = await call('POST /agents/{agent_id}/versions', agentId, { note: 'before the contract test' });
  await call('GET /agents/{agent_id}/versions', agentId);
  await call('POST /agents/{agent_id}/versions/{version_id}/rollback', { ...agentId, version_id: version.version_id });
  await call('GET /public/agents');
  const etlAgent = await call('POST /agents', {}, { name: 'Contract spare', agent_type: 'etl' });
  await call('DELETE /agents/{agent_id}', { agent_id: etlAgent.agent_id });

  // MCP mounts, held tool calls and their decisions.
  const mcpMount = await call('POST /agents/{agent_id}/mcp-mounts', agentId, {
    mcp_server_id: server.mcp_server_id,
    allowed_tools: ['echo'],
    approval: 'operator',
  });
  await call('GET /agents/{agent_id}/mcp-mounts', agentId);
  await call('PATCH /agents/{agent_id}/mcp-mounts/{mount_id}', { ...agentId, mount_id: mcpMount.mount_id }, { priority: 5 });
  await call('POST /agents/{agent_id}/mcp-response-preview', agentId, {
    mcp_server_id: server.mcp_server_id,
    tool_name: 'echo',
    arguments: { message: 'preview' },
  });

  // A public session, chat turns over the stream.
  const session = await call('POST /public/agents/{agent_id}/sessions', agentId);
  const sessionId = { session_id: session.session_id };
  const chat = (message: string) => call('POST /stream', {}, { thread_id: session.session_id, agent_id: agent.agent_id, message });
  await chat('Where is my parcel? ');
  await chat('/echo approve me');
  await chat('/echo reject me');
  const approvals = (await call('GET /sessions/{session_id}/tool-approvals', sessionId)).items as { approval_id: string }[];
  await call('POST /tool-approvals/{approval_id}/approve', { approval_id: approvals[1]!.approval_id });
  await call('POST /tool-approvals/{approval_id}/reject', { approval_id: approvals[0]!.approval_id });
  await call('GET /sessions/{session_id}/mcp-calls', sessionId);
  await call('GET /agents/{agent_id}/mcp-calls', agentId);
  await call('GET /sessions');
  await call('GET /sessions/{session_id}/messages', sessionId);
  const turns = (await call('GET /sessions/{session_id}/turns', sessionId)).items as { turn_id: string; assistant_reply_preview: string | null }[];
  const answered = { ...sessionId, turn_id: turns.at(-1)!.turn_id };
  await call('GET /sessions/{session_id}/turns/{turn_id}/context', answered);
  await call('GET /agents/{agent_id}/cost-overview', agentId);
  await call('GET /agents/{agent_id}/usage-by-day', agentId);

  // Cancelling a running turn.
  slow = true;
  const running = chat('please write a long essay about parcels and their journeys ');
  await waitFor(
    'a running turn to cancel',
    () => admin.request('POST', `/sessions/${encodeURIComponent(session.session_id)}/cancel`),
    (r) => r.status === 202,
    10_000,
  );
  await running;
  slow = false;

  // Human takeover.
  await call('POST /sessions/{session_id}/takeover', sessionId, {});
  await call('POST /sessions/{session_id}/manual-messages', sessionId, { content: 'A person here: your parcel is on its way.' });
  await call('POST /sessions/{session_id}/release', sessionId, {});
  await call('GET /sessions/{session_id}/takeover-events', sessionId);

  // Scheduled tasks: one made over REST, read, its (empty) runs, cancelled.
  const task = await call(
    'POST /scheduled-tasks',
    {},
    {
      agent_id: agentId.agent_id,
      session_id: sessionId.session_id,
      schedule_payload: { kind: 'cron', expression: '0 9 * * 1-5', time_zone: 'Europe/Berlin' },
      payload: { message: 'Send the stand-up notes.' },
    },
  );
  const taskId = { task_id: task.task_id as string };
  await call('GET /scheduled-tasks');
  await call('GET /scheduled-tasks/{task_id}', taskId);
  await call('GET /scheduled-tasks/{task_id}/runs', taskId);
  await call('POST /scheduled-tasks/{task_id}/cancel', taskId);

  // Evaluation: a dataset made, filled from a CSV, frozen, its items and source CSV read; a run on the snapshot read; a
  // spare snapshot deleted.
  const dataset = await call('POST /evaluation-datasets', {}, { name: 'Contract FAQ', task_type: 'qa' });
  const datasetId = { dataset_id: dataset.dataset_id as string };
  const datasetCsv = new FormData();
  datasetCsv.append('file', new Blob(['question,expected_answer\nHow long do returns take?,30 days\n'], { type: 'text/csv' }), 'faq.csv');
  await call('POST /evaluation-datasets/{dataset_id}/import', datasetId, datasetCsv);
  const snapshot = await call('POST /evaluation-datasets/{dataset_id}/freeze', datasetId);
  await call('GET /evaluation-datasets');
  await call('GET /evaluation-datasets/{dataset_id}', datasetId);
  await call('GET /evaluation-datasets/{dataset_id}/items', datasetId);
  await call('GET /evaluation-datasets/{dataset_id}/source-csv', datasetId);
  const evaluationRun = await call('POST /agents/{agent_id}/evaluation-runs', agentId, { dataset_id: snapshot.dataset_id });
  const runId = { ...agentId, evaluation_run_id: evaluationRun.run_id as string };
  await call('GET /agents/{agent_id}/evaluation-runs', agentId);
  await call('GET /agents/{agent_id}/evaluation-runs/{evaluation_run_id}', runId);
  await call('GET /agents/{agent_id}/evaluation-runs/{evaluation_run_id}/results', runId);
  await call('GET /evaluation-datasets/{dataset_id}/runs', { dataset_id: snapshot.dataset_id as string });
  await waitFor(
    'the contract evaluation run',
    async () => (await admin.request('GET', `/agents/${agentId.agent_id}/evaluation-runs/${runId.evaluation_run_id}`)).body,
    (run: { execution_state: string }) => run.execution_state === 'completed',
    60_000,
  );
  await call('GET /agents/{agent_id}/evaluation-runs/{evaluation_run_id}/results.csv', runId);
  await call('GET /agents/{agent_id}/evaluation-runs/{evaluation_run_id}/slices', runId);
  await call('POST /agents/{agent_id}/evaluation-runs/{evaluation_run_id}/evaluate-gate', runId, {});
  // A run compared with itself: the baseline is a query parameter.
  const runPath = `/agents/${agentId.agent_id}/evaluation-runs/${runId.evaluation_run_id}`;
  t.equal((await admin.request('GET', `${runPath}/compare?baseline_run_id=${runId.evaluation_run_id}`)).status, 200);
  const spareSnapshot = await call('POST /evaluation-datasets/{dataset_id}/freeze', datasetId);
  await call('DELETE /evaluation-datasets/{dataset_id}', { dataset_id: spareSnapshot.dataset_id as string });

  // Fusion: a definition with a file input, runs by an administrator and by a public caller with a key.
  const fusion = await call(
    'POST /agents',
    {},
    {
      name: 'Contract Fusion',
      agent_type: 'fusion',
      public_access_mode: 'public_api_key',
      fusion_definition: {
        instructions: 'Read the note.',
        input_slots: [{ name: 'note', kind: 'file', accepted_content_types: ['text/plain'] }],
        output_slots: [{ name: 'fields', kind: 'structured_json', structured_output_schema: { type: 'object', properties: { name: { type: 'string' } } } }],
      },
    },
  );
  const fusionId = { agent_id: fusion.agent_id as string };
  const noteForm = () => {
    const form = new FormData();
    form.append('note', new Blob(['name: Ada'], { type: 'text/plain' }), 'note.txt');
    return form;
  };
  const fusionRun = await call('POST /agents/{agent_id}/fusion-runs', fusionId, noteForm());
  const fusionRunId = { ...fusionId, fusion_run_id: fusionRun.run_id as string };
  await call('GET /agents/{agent_id}/fusion-runs', fusionId);
  await call('GET /agents/{agent_id}/fusion-runs/{fusion_run_id}', fusionRunId);
  await call('GET /agents/{agent_id}/fusion-runs/{fusion_run_id}/inputs/{input_id}/download', { ...fusionRunId, input_id: fusionRun.inputs[0].input_id });
  await call('POST /agents/{agent_id}/publish', fusionId);
  const apiKey = await call('POST /agents/{agent_id}/public-api-keys', fusionId, { label: 'contract' });
  await call('GET /agents/{agent_id}/public-api-keys', fusionId);
  const keyed = { headers: { 'x-agent-api-key': apiKey.api_key as string }, as: new AdminClient(host.url) };
  await call('GET /public/agents/{agent_id}/fusion-runtime', fusionId, undefined, keyed);
  const publicRun = await call('POST /public/agents/{agent_id}/fusion-runs', fusionId, noteForm(), keyed);
  const publicRunId = { ...fusionId, fusion_run_id: publicRun.run_id as string };
  await call('GET /public/agents/{agent_id}/fusion-runs', fusionId, undefined, keyed);
  await call('GET /public/agents/{agent_id}/fusion-runs/{fusion_run_id}', publicRunId, undefined, keyed);
  await call(
    'GET /public/agents/{agent_id}/fusion-runs/{fusion_run_id}/inputs/{input_id}/download',
    { ...publicRunId, input_id: publicRun.inputs[0].input_id },
    undefined,
    keyed,
  );
  await call('POST /agents/{agent_id}/public-api-keys/{key_id}/revoke', { ...fusionId, key_id: apiKey.key_id as string });

  // ETL: a job by an administrator and one by an anonymous caller, each read, downloaded and deleted.
  const etl = await call('POST /agents', {}, { name: 'Contract ETL', agent_type: 'etl', public_access_mode: 'public_anonymous' });
  const etlForm = () => {
    const form = new FormData();
    form.append('source_csv', new Blob(['Full Name,E-mail\nAda,ada@example.com\n'], { type: 'text/csv' }), 'people.csv');
    form.append('target_schema_csv', new Blob(['name,type,required\nname,string,yes\nemail,string,no\n'], { type: 'text/csv' }), 'schema.csv');
    return form;
  };
  const anonymousCaller = new AdminClient(host.url);
  for (const [prefix, options] of [
    ['', {}],
    ['/public', { as: anonymousCaller }],
  ] as const) {
    const etlJob = await call(`POST ${prefix}/agents/{agent_id}/etl-jobs`, { agent_id: etl.agent_id }, etlForm(), options);
    const owner = prefix ? { ...options, headers: { 'x-caller-token': etlJob.caller_token as string } } : options;
    const etlJobId = { agent_id: etl.agent_id as string, etl_job_id: etlJob.job_id as string };
    await call(`GET ${prefix}/agents/{agent_id}/etl-jobs`, { agent_id: etl.agent_id }, undefined, owner);
    await waitFor(
      'the contract ETL job',
      async () => (await (owner.as ?? admin).request('GET', `${prefix}/agents/${etl.agent_id}/etl-jobs/${etlJob.job_id}`, undefined, owner.headers)).body,
      (read: any) => read.status === 'succeeded',
      30_000,
    );
    await call(`GET ${prefix}/agents/{agent_id}/etl-jobs/{etl_job_id}`, etlJobId, undefined, owner);
    for (const file of ['download', 'source-csv', 'target-schema-csv', 'report'])
      await call(`GET ${prefix}/agents/{agent_id}/etl-jobs/{etl_job_id}/${file}`, etlJobId, undefined, owner);
    await call(`DELETE ${prefix}/agents/{agent_id}/etl-jobs/{etl_job_id}`, etlJobId, undefined, owner);
  }

  // Document recognition: a runtime agent, a run by a caller and reviewed by it and by an administrator, downloads on
  // both sides, the views, and the import of the reviewed run into a document_recognition dataset.
  const recognizer = await call(
    'POST /agents',
    {},
    {
      name: 'Contract recognizer',
      agent_type: 'fusion',
      fusion_definition: {
        input_slots: [{ name: 'document', kind: 'file' }],
        output_slots: [
          {
            name: 'fields',
            kind: 'structured_json',
            structured_output_profile: 'document_field_set',
            structured_output_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          },
        ],
      },
    },
  );
  const recognizerId = { agent_id: recognizer.agent_id as string };
  await call('POST /agents/{agent_id}/publish', recognizerId);
  await call('PUT /admin/document-recognition/runtime-agents/{agent_id}', recognizerId);
  await call('GET /document-recognition/runtime-agents');
  await call('GET /document-recognition/runtime-agents/{runtime_agent_id}', { runtime_agent_id: recognizer.agent_id });
  await call('GET /admin/document-recognition/runtime-agents');
  const recognitionForm = new FormData();
  recognitionForm.append('runtime_agent_id', recognizer.agent_id);
  recognitionForm.append('file', new Blob(['name: Ada'], { type: 'text/plain' }), 'note.txt');
  const recognitionCaller = new AdminClient(host.url);
  const recognition = await call('POST /document-recognition/runs', {}, recognitionForm, { as: recognitionCaller });
  const recognitionOwner = { as: recognitionCaller, headers: { 'x-caller-token': recognition.caller_token as string } };
  const recognitionRunId = { recognition_run_id: recognition.run_id as string };
  await waitFor(
    'the contract recognition run',
    async () => (await recognitionCaller.request('GET', `/document-recognition/runs/${recognition.run_id}`, undefined, recognitionOwner.headers)).body,
    (read: any) => read.status === 'succeeded',
    30_000,
  );
  const fieldId = { ...recognitionRunId, field_id: 'name' };
  for (const [prefix, owner] of [
    ['', recognitionOwner],
    ['/admin', {}],
  ] as const) {
    await call(`GET ${prefix}/document-recognition/runs`, {}, undefined, owner);
    await call(`GET ${prefix}/document-recognition/runs/{recognition_run_id}`, recognitionRunId, undefined, owner);
    for (const file of ['source-document', 'source-pdf', 'result'])
      await call(`GET ${prefix}/document-recognition/runs/{recognition_run_id}/${file}`, recognitionRunId, undefined, owner);
    await call(
      `GET ${prefix}/document-recognition/runs/{recognition_run_id}/preview-pages/{page_number}`,
      { ...recognitionRunId, page_number: '1' },
      undefined,
      owner,
    );
    await call(`PATCH ${prefix}/document-recognition/runs/{recognition_run_id}/field-reviews/{field_id}`, fieldId, { value: `Ada ${prefix}` }, owner);
    await call(`GET ${prefix}/document-recognition/runs/{recognition_run_id}/field-reviews/{field_id}/revisions`, fieldId, undefined, owner);
  }
  await call('GET /admin/document-recognition/overview');
  const recognitionSet = await call('POST /evaluation-datasets', {}, { name: 'Contract documents', task_type: 'document_recognition' });
  await call(
    'POST /evaluation-datasets/{dataset_id}/document-recognition-runs/import',
    { dataset_id: recognitionSet.dataset_id },
    { run_id_list: [recognition.run_id] },
  );
  await call('DELETE /admin/document-recognition/runtime-agents/{agent_id}', recognizerId);

  // Knowledge: a source, a document through ingestion, rebuild and inspection, its downloads.
  const source = await createSource(admin, { name: 'Contract handbook' });
  const sourceId = { source_id: source.source_id };
  await call('GET /knowledge-sources');
  await call('GET /knowledge-sources/{source_id}', sourceId);
  await call('PATCH /knowledge-sources/{source_id}', sourceId, { description: 'for the contract test' });
  await call('POST /embedding-model/check-readiness');
  const doc = await uploadOk(admin, source.source_id, {
    filename: 'parcels.txt',
    contentType: 'text/plain',
    data: 'Parcels leave the depot every morning at seven.\n',
  });
  const documentId = { ...sourceId, document_id: doc.document_id };
  await ingest(admin, source.source_id);
  const rebuild = await call('POST /knowledge-sources/{source_id}/documents/{document_id}/rebuild-from-snapshot', documentId, {});
  await call('GET /ingestion-jobs/{job_id}', { job_id: rebuild.job_id });
  await waitForJob(admin, rebuild.job_id);
  await call('GET /knowledge-sources/{source_id}/ingestion-jobs', sourceId);
  await call('GET /knowledge-sources/{source_id}/documents', sourceId);
  await call('GET /knowledge-sources/{source_id}/documents/{document_id}', documentId);
  await call('GET /knowledge-sources/{source_id}/documents/{document_id}/download', documentId);
  await call('GET /object-store/objects/{key}', { key: `knowledge/${source.source_id}/${doc.document_id}/parcels.txt` });
  const run = await call('POST /knowledge-sources/{source_id}/inspect-runs', sourceId, { inspection_mode: 'vector_health' });
  await call('GET /knowledge-sources/{source_id}/inspect-runs', sourceId);
  await call('GET /knowledge-sources/{source_id}/inspect-runs/{run_id}', { ...sourceId, run_id: run.run_id });
  const mount = await call('POST /agents/{agent_id}/mounts', agentId, { source_id: source.source_id });
  await call('GET /agents/{agent_id}/mounts', agentId);
  await call('POST /sessions/{session_id}/turns/{turn_id}/rag-debug', answered, {});

  // A correction of the answered turn, published into the agent's managed source.
  await call('GET /sessions/{session_id}/turns/{turn_id}/correction', answered);
  await call('PATCH /sessions/{session_id}/turns/{turn_id}/correction', answered, {
    corrected_question: 'When do parcels leave?',
    corrected_answer: 'Every morning at seven.',
  });
  const published = await call('POST /sessions/{session_id}/turns/{turn_id}/correction/publish', answered);
  await call('GET /knowledge-sources/{source_id}/corrections', { source_id: published.source_id });
  await call('DELETE /agents/{agent_id}/mounts/{mount_id}', { ...agentId, mount_id: mount.mount_id });
  await call('DELETE /knowledge-sources/{source_id}/documents/{document_id}', documentId);

  // Skills on the reference server.
  const skill = await call('POST /skills', {}, { name: 'echo_back', description: 'Says it back' });
  const skillId = { skill_id: skill.skill_id };
  await call('GET /skills');
  await call('GET /skills/{skill_id}', skillId);
  await call('PATCH /skills/{skill_id}', skillId, { description: 'Says it back, word for word' });
  const draft = await call('POST /skills/{skill_id}/versions', skillId, {
    backend_type: 'mcp',
    backend_ref_id: server.mcp_server_id,
    config: { tool_name: 'echo' },
  });
  const versionId = { ...skillId, version_id: draft.version_id };
  await call('GET /skills/{skill_id}/versions', skillId);
  await call('GET /skills/{skill_id}/versions/{version_id}', versionId);
  await call('PATCH /skills/{skill_id}/versions/{version_id}', versionId, { config: { tool_name: 'echo' } });
  await call('POST /skills/{skill_id}/versions/{version_id}/release', versionId);
  const skillMount = await call('POST /agents/{agent_id}/skill-mounts', agentId, { skill_version_id: draft.version_id });
  await call('GET /agents/{agent_id}/skill-mounts', agentId);
  await call('PATCH /agents/{agent_id}/skill-mounts/{mount_id}', { ...agentId, mount_id: skillMount.mount_id }, { priority: 3 });
  await call('GET /agents/{agent_id}/skill-calls', agentId);
  await call('GET /sessions/{session_id}/skill-calls', sessionId);
  await call('DELETE /agents/{agent_id}/skill-mounts/{mount_id}', { ...agentId, mount_id: skillMount.mount_id });
  await call('DELETE /agents/{agent_id}/mcp-mounts/{mount_id}', { ...agentId, mount_id: mcpMount.mount_id });
  await call('GET /admin/audit-logs');

  // Last, as a second super admin: the protected bootstrap administrator goes by break-glass, then the session ends.
  const second = await call('POST /admin/admin-users', {}, { username: 'second-root', password: 'second-root-pass' }, await challenged());
  await call('PATCH /admin/admin-users/{admin_user_id}', { admin_user_id: second.admin_user_id }, { role_code: 'super_admin' }, await challenged());
  const other = new AdminClient(host.url);
  await other.login('second-root', 'second-root-pass');
  const me = await call('GET /admin/auth/me', {}, undefined, { as: admin });
  await call(
    'POST /admin/admin-users/{admin_user_id}/break-glass-delete',
    { admin_user_id: me.admin_user_id },
    { reason: 'the contract test removes its first owner' },
    await challenged(other, 'second-root-pass'),
  );
  await call('POST /admin/auth/logout', {}, undefined, { as: other });

  const seen = answeredOperations(host.url);
  const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${template}`,
      success: Number(Object.keys(operation.responses as Record<string, unknown>).find((s) => s.startsWith('2'))),
    })),
  );
  t.ok(operations.length >= 114, `the document lists ${operations.length} operations`);
  t.same(
    operations.filter(({ name, success }) => !seen.get(name)?.has(success)).map(({ name }) => name),
    [],
    'every operation answered its documented success at least once, and each body matched its schema',
  );
});
