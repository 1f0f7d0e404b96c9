// Managed corrections (spec 2.3, 3.2, 4.4, 4.8): an operator corrects an AI
// turn, publishes it, and the next answer retrieves the correction from the
// agent's managed_correction source; a publish that finishes after a newer
// one is discarded; a failed publish leaves the last published answer.
import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { startOpenAiEmbeddingsFixture } from '../fixtures/openai-embeddings-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { createSource, ingest, upload, uploadOk } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';
import { tokensOf } from '../helpers/sse.js';

const ALWAYS_VISIBLE = ['manual_reply_message_id', 'published_at', 'revision_number', 'status', 'updated_at'];

async function chatAgent(admin: AdminClient, extra: Record<string, unknown> = {}) {
  const created = await admin.request('POST', '/agents', { name: 'Travel desk', agent_type: 'chat', public_access_mode: 'public_anonymous', ...extra });
  return created.body as { agent_id: string };
}

async function askAndReadTurn(host: { url: string }, admin: AdminClient, agentId: string, thread: string, message: string) {
  const { events } = await admin.stream({ thread_id: thread, agent_id: agentId, message });
  const [turn] = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items;
  return { reply: tokensOf(events), turn };
}

/** Polls the correction until `done` holds. */
const correctionWhen = (admin: AdminClient, path: string, done: (body: any) => boolean) =>
  waitFor(`correction ${path}`, async () => (await admin.request('GET', path)).body, done, 60_000) as Promise<Record<string, any>>;

t.test('a published correction answers the next question; the managed source stays the publish flow’s own', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = await chatAgent(admin);
  const handbook = await createSource(admin, { name: 'Travel handbook' });
  await uploadOk(admin, handbook.source_id, {
    filename: 'travel.txt',
    contentType: 'text/plain',
    data: 'The hotel limit is 120 euros per night in every city.',
  });
  await ingest(admin, handbook.source_id);
  await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: handbook.source_id });

  const before = await askAndReadTurn(host, admin, agent.agent_id, 'trip-1', 'What is the hotel limit per night?');
  t.match(before.reply, /120 euros/, 'the first answer comes from the handbook');
  const path = `/sessions/trip-1/turns/${before.turn.turn_id}/correction`;
  t.equal(before.turn.correction, null, 'a turn without a correction has a null summary');

  const empty = await admin.request('GET', path);
  t.equal(empty.status, 200);
  t.match(empty.body, {
    status: 'none',
    revision_number: 0,
    original_user_message: 'What is the hotel limit per night?',
    original_ai_answer: before.reply,
    corrected_answer: null,
  });

  t.test('drafts: validation and revisions', async (t) => {
    const missing = await admin.request('PATCH', path, { corrected_question: 'What is the hotel limit?' });
    t.equal(missing.status, 422, 'corrected_answer is required');
    t.match(missing.body.detail, [{ loc: ['body', 'corrected_answer'] }]);
    t.equal((await admin.request('PATCH', path, { corrected_question: ' ', corrected_answer: 'x' })).status, 422, 'a blank question is refused');
    const notHuman = await admin.request('PATCH', path, { corrected_question: 'q', corrected_answer: 'a', manual_reply_message_id: randomUUID() });
    t.equal(notHuman.status, 422, 'manual_reply_message_id must name a human reply of the session');
    t.match(notHuman.body.detail, [{ loc: ['body', 'manual_reply_message_id'] }]);
    t.equal((await admin.request('POST', `${path}/publish`)).status, 409, 'nothing to publish before a draft is saved');
    t.equal((await admin.request('GET', `/sessions/trip-1/turns/${randomUUID()}/correction`)).status, 404);

    const first = await admin.request('PATCH', path, {
      corrected_question: 'What is the hotel limit per night?',
      corrected_answer: 'The hotel limit is 150 euros per night.',
      correction_note: 'raised in March',
    });
    t.equal(first.status, 200);
    t.match(first.body, {
      status: 'draft',
      revision_number: 1,
      correction_note: 'raised in March',
      source_id: null,
      document_id: null,
      original_ai_answer: before.reply,
    });
    const second = await admin.request('PATCH', path, {
      corrected_question: 'What is the hotel limit per night?',
      corrected_answer: 'Since March the hotel limit is 150 euros per night, breakfast included.',
    });
    t.match(second.body, { status: 'draft', revision_number: 2, correction_note: 'raised in March' }, 'each save is a revision; an absent note is kept');
    const audits = await query(host.databaseUrl, "SELECT action FROM admin_action_audits WHERE action = 'knowledge_correction.update'");
    t.equal(audits.length, 2, 'every save is audited');
  });

  t.test('publish: managed source created and mounted, only the candidate ingested, then published', async (t) => {
    const published = await admin.request('POST', `${path}/publish`);
    t.equal(published.status, 202);
    t.equal(published.body.status, 'publishing');
    t.ok(published.body.ingestion_job_id, 'the publish has its ingestion job');
    const managed = (await admin.request('GET', `/knowledge-sources/${published.body.source_id}`)).body;
    t.match(managed, { source_kind: 'managed_correction', managed_for_agent_id: agent.agent_id, name: 'Corrections: Travel desk' });
    const mounts = (await admin.request('GET', `/agents/${agent.agent_id}/mounts`)).body.items;
    t.same(mounts.map((m: { source_kind: string }) => m.source_kind).sort(), ['managed_correction', 'standard'], 'mounted to its agent automatically');
    t.equal((await admin.request('POST', `${path}/publish`)).status, 409, 'a revision already publishing is not published twice');

    const done = await correctionWhen(admin, path, (c) => c.status !== 'publishing');
    t.match(done, {
      status: 'published',
      revision_number: 2,
      published_revision_number: 2,
      source_name: 'Corrections: Travel desk',
      ingestion_job_status: 'succeeded',
      last_error_message: null,
    });
    t.ok(done.published_at && done.document_id);
    const job = (await admin.request('GET', `/ingestion-jobs/${done.ingestion_job_id}`)).body;
    t.match(job, { job_kind: 'publish_correction', documents_total: 1, document_ids: [done.document_id] }, 'only the candidate document is ingested');
    const document = (await admin.request('GET', `/knowledge-sources/${done.source_id}/documents/${done.document_id}`)).body;
    t.match(document, { status: 'indexed', vector_status: 'indexed', content_type: 'text/plain; charset=utf-8' });
    t.same(
      { ...document.metadata_json, revision_number: undefined },
      {
        knowledge_correction_id: done.correction_id,
        source_turn_id: before.turn.turn_id,
        source_session_id: 'trip-1',
        document_origin: 'managed_correction',
        revision_number: undefined,
      },
      'the document carries the metadata_json fields of spec 2.6',
    );
    t.equal((await admin.request('POST', `${path}/publish`)).status, 409, 'a published revision is not published again');

    const ledger = (await admin.request('GET', `/knowledge-sources/${done.source_id}/corrections`)).body;
    t.match(ledger, { limit: 50, next_cursor: null });
    t.match(ledger.items, [
      {
        correction_id: done.correction_id,
        turn_id: before.turn.turn_id,
        sequence: 1,
        revision_number: 2,
        status: 'published',
        document_id: done.document_id,
        ingestion_job_status: 'succeeded',
      },
    ]);
  });

  t.test('the next answer retrieves the correction, with its source fields in rag_context', async (t) => {
    const after = await askAndReadTurn(host, admin, agent.agent_id, 'trip-2', 'What is the hotel limit per night?');
    t.match(after.reply, /150 euros per night, breakfast included/, 'the offline model answers from the correction');
    const context = (await admin.request('GET', `/sessions/trip-2/turns/${after.turn.turn_id}/context`)).body;
    const hit = context.rag_context.find((c: { source_kind: string }) => c.source_kind === 'managed_correction');
    const correction = (await admin.request('GET', path)).body;
    t.match(hit, {
      source_name: 'Corrections: Travel desk',
      source_kind: 'managed_correction',
      source_priority: 1000,
      document_id: correction.document_id,
      document_origin: 'managed_correction',
    });
    t.equal(context.rag_context[0].source_kind, 'managed_correction', 'the correction ranks first');
  });

  t.test('managed sources refuse the generic endpoints (spec 4.8 rules 1 and 2)', async (t) => {
    const { source_id: managed, document_id } = (await admin.request('GET', path)).body;
    const other = await chatAgent(admin, { name: 'Other desk' });
    t.equal((await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: managed })).status, 409, 'no manual mount');
    t.equal((await admin.request('POST', `/agents/${other.agent_id}/mounts`, { source_id: managed })).status, 409, 'no mount to another agent');
    t.equal((await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${managed}`)).status, 409, 'no unmount');
    t.equal((await admin.request('PATCH', `/knowledge-sources/${managed}`, { name: 'renamed' })).status, 409, 'no PATCH');
    t.equal((await upload(admin, managed, { filename: 'x.txt', contentType: 'text/plain', data: 'x' })).status, 409, 'no upload');
    t.equal((await admin.request('DELETE', `/knowledge-sources/${managed}/documents/${document_id}`)).status, 409, 'no document delete');
    t.equal((await admin.request('POST', `/knowledge-sources/${managed}/ingest`, {})).status, 409, 'no ingest');
  });

  t.test('turn summaries show the publication fields only to knowledge readers', async (t) => {
    const [summary] = (await admin.request('GET', '/sessions/trip-1/turns')).body.items;
    t.match(summary.correction, { status: 'published', revision_number: 2, source_name: 'Corrections: Travel desk', ingestion_job_status: 'succeeded' });
    t.ok(
      summary.correction.source_id && summary.correction.document_id && 'last_error_message' in summary.correction,
      'a super admin sees the publication fields',
    );
    const id = randomUUID();
    await query(host.databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code) VALUES ($1, 'viewer', $2, 'sub_admin')", [
      id,
      await hash('viewer-password'),
    ]);
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'conversations.read')", [
      randomUUID(),
      id,
    ]);
    const viewer = new AdminClient(host.url);
    await viewer.login('viewer', 'viewer-password');
    const [hidden] = (await viewer.request('GET', '/sessions/trip-1/turns')).body.items;
    t.same(Object.keys(hidden.correction).sort(), ALWAYS_VISIBLE, 'without knowledge.read only the always-visible fields');
    t.equal((await viewer.request('GET', path)).status, 403, 'the correction itself needs knowledge.read too');
    t.equal((await viewer.request('PATCH', path, { corrected_question: 'q', corrected_answer: 'a' })).status, 403, 'saving needs knowledge.write');
  });

  t.test('a human reply can be linked; a new revision replaces the published document once it is published', async (t) => {
    await admin.request('PATCH', `/agents/${agent.agent_id}`, { human_takeover_enabled: true });
    t.equal((await admin.request('POST', '/sessions/trip-1/takeover', {})).status, 200);
    const manual = await admin.request('POST', '/sessions/trip-1/manual-messages', { content: 'It is 150 euros now, sorry.' });
    t.equal(manual.status, 201);
    await admin.request('POST', '/sessions/trip-1/release', {});
    const old = (await admin.request('GET', path)).body;
    const saved = await admin.request('PATCH', path, {
      corrected_question: 'What is the hotel limit per night?',
      corrected_answer: 'The hotel limit is 160 euros per night from June.',
      manual_reply_message_id: manual.body.message_id,
    });
    t.match(
      saved.body,
      { status: 'draft', revision_number: 3, manual_reply_message_id: manual.body.message_id, document_id: old.document_id },
      'the published document keeps serving the draft',
    );
    await admin.request('POST', `${path}/publish`);
    const done = await correctionWhen(admin, path, (c) => c.status !== 'publishing');
    t.match(done, { status: 'published', published_revision_number: 3 });
    t.not(done.document_id, old.document_id);
    // Removed by the same settle pass, just after the publish commits: a reader may see it a moment longer.
    const oldDocument = () => admin.request('GET', `/knowledge-sources/${done.source_id}/documents/${old.document_id}`).then((r) => r.status);
    t.equal(await waitFor('the replaced document removed', oldDocument, (status) => status === 404, 10_000), 404, 'the replaced document is removed');
    const after = await askAndReadTurn(host, admin, agent.agent_id, 'trip-3', 'What is the hotel limit per night?');
    t.match(after.reply, /160 euros/);
    t.notMatch(after.reply, /150 euros/, 'the replaced revision no longer answers');
  });
});

t.test('a publish that finishes after a newer one is discarded as stale; a failed publish keeps the last answer', async (t) => {
  // An embeddings server the test can hold, so the two publishes finish in the order the test chooses.
  const holds = new Map<string, { release: () => void; reached: Promise<void>; arrived: () => void }>();
  const hold = (marker: string) => {
    let release!: () => void;
    let arrived!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    holds.set(marker, { release, reached, arrived });
    return { gate, reached };
  };
  const gates = new Map<string, Promise<void>>();
  const embeddings = await startOpenAiEmbeddingsFixture({
    respond: async (body) => {
      const text = [body.input].flat().join(' ');
      for (const [marker, gate] of gates) {
        if (!text.includes(marker)) continue;
        holds.get(marker)!.arrived();
        await gate;
      }
      return text.includes('unembeddable') ? { status: 400, error: { message: 'input rejected by the embeddings fixture' } } : {};
    },
  });
  t.teardown(() => embeddings.close());
  const host = await startTestHost(t, {
    env: {
      AGENT_HOST__KNOWLEDGE__EMBEDDER: '"openai"',
      AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_BASE_URL: `"${embeddings.url}"`,
      AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_DIM: '8',
      AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_MAX_RETRIES: '0',
      OPENAI_API_KEY: 'test-key',
    },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = await chatAgent(admin);
  const { turn } = await askAndReadTurn(host, admin, agent.agent_id, 'stale-1', 'Can I bring my dog to the office?');
  const path = `/sessions/stale-1/turns/${turn.turn_id}/correction`;
  const save = (answer: string) => admin.request('PATCH', path, { corrected_question: 'Can I bring my dog to the office?', corrected_answer: answer });

  for (const marker of ['older-revision', 'newer-revision']) gates.set(marker, hold(marker).gate);
  await save('Dogs are welcome on Fridays (older-revision).');
  const older = (await admin.request('POST', `${path}/publish`)).body;
  await holds.get('older-revision')!.reached;
  await save('Dogs are welcome every day (newer-revision).');
  const newer = (await admin.request('POST', `${path}/publish`)).body;
  t.equal(newer.status, 'publishing', 'a new revision may be published while an older one is still publishing');
  await holds.get('newer-revision')!.reached;

  holds.get('newer-revision')!.release();
  const afterNewer = await correctionWhen(admin, path, (c) => c.status === 'published');
  t.equal(afterNewer.revision_number, 2);
  holds.get('older-revision')!.release();
  const ledgerPath = `/knowledge-sources/${afterNewer.source_id}/corrections`;
  const ledger = await waitFor(
    'both publishes settled',
    async () => (await admin.request('GET', ledgerPath)).body.items,
    (items: any[]) => items.every((p) => p.status !== 'publishing'),
    60_000,
  );
  t.same(
    ledger.map((p: { sequence: number; revision_number: number; status: string }) => [p.sequence, p.revision_number, p.status]),
    [
      [2, 2, 'published'],
      [1, 1, 'stale'],
    ],
    'the older publish, finishing last, is discarded as stale',
  );
  const settled = (await admin.request('GET', path)).body;
  t.match(
    settled,
    { status: 'published', published_revision_number: 2, document_id: afterNewer.document_id },
    'the correction is unchanged by the stale result',
  );
  const stale = ledger.find((p: { status: string }) => p.status === 'stale');
  await waitFor(
    'the stale document removed',
    async () => (await admin.request('GET', `/knowledge-sources/${afterNewer.source_id}/documents/${stale.document_id}`)).status,
    (s) => s === 404,
    30_000,
  );
  const documents = (await admin.request('GET', `/knowledge-sources/${afterNewer.source_id}/documents`)).body.items;
  t.same(
    documents.map((d: { document_id: string }) => d.document_id),
    [afterNewer.document_id],
    'the managed source holds only the served document',
  );

  await save('This answer is unembeddable.');
  await admin.request('POST', `${path}/publish`);
  const failed = await correctionWhen(admin, path, (c) => c.status !== 'publishing');
  t.match(failed, { status: 'failed', revision_number: 3, published_revision_number: 2, document_id: afterNewer.document_id, ingestion_job_status: 'failed' });
  t.match(failed.last_error_message, /input rejected by the embeddings fixture/, 'the failure says why');
  const [failedSummary] = (await admin.request('GET', '/sessions/stale-1/turns')).body.items;
  t.match(failedSummary.correction, { status: 'failed', last_error_message: /input rejected/ });
  const servedDocs = (await admin.request('GET', `/knowledge-sources/${afterNewer.source_id}/documents`)).body.items;
  t.same(
    servedDocs.map((d: { document_id: string }) => d.document_id),
    [afterNewer.document_id],
    'the last published document keeps serving; the failed candidate is removed',
  );
  const retry = await save('Dogs are welcome every day, on a leash.');
  t.equal(retry.body.status, 'draft', 'a failed correction can be edited and published again');
});
