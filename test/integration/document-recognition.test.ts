// Document recognition (spec 2.9, 4.9, 4.10, issue 23) on the offline model: runtime agents registered and refused
// with the reason, a generated invoice PDF uploaded and extracted (fields, pages, rendition, previews, result), the
// caller-token ownership rule, hostile and wrong uploads, the field-review ledger (effective and empty changes, two
// concurrent reviewers, append-only in the database), administrator views, and reviewed runs imported into a
// document_recognition dataset, frozen with copies of their documents, and evaluated field by field.
import { createCanvas } from '@napi-rs/canvas';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { invoicePdf } from '../../examples/invoice.mjs';
import { docxBomb } from '../fixtures/hostile-documents.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

export const FIELDS_SCHEMA = {
  type: 'object',
  required: ['invoice_number', 'vendor', 'due_date', 'total'],
  properties: {
    invoice_number: { type: 'string', title: 'Invoice number' },
    vendor: { type: 'string', title: 'Vendor' },
    due_date: { type: 'string', title: 'Due date' },
    total: { type: 'number', title: 'Total' },
  },
};

export const RECOGNITION_DEFINITION = {
  instructions: 'Extract the invoice fields.',
  input_slots: [{ name: 'document', kind: 'file', accepted_content_types: ['application/pdf', 'image/*', 'text/plain'] }],
  output_slots: [{ name: 'fields', kind: 'structured_json', structured_output_profile: 'document_field_set', structured_output_schema: FIELDS_SCHEMA }],
};

const PNG = [0x89, 0x50, 0x4e, 0x47];

const upload = (runtimeAgentId: string, data: Uint8Array | string, type: string, filename: string) => {
  const form = new FormData();
  form.append('runtime_agent_id', runtimeAgentId);
  form.append('file', new Blob([data], { type }), filename);
  return form;
};

t.test('runtime agents, runs, ownership, reviews and the ledger, administrator views, evaluation of reviewed runs', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const caller = new AdminClient(host.url);
  const stranger = new AdminClient(host.url);

  // Registration: a published fusion agent whose definition takes a file and gives a document_field_set.
  const agent = (await admin.request('POST', '/agents', { name: 'Invoices', agent_type: 'fusion', fusion_definition: RECOGNITION_DEFINITION })).body;
  const id = agent.agent_id;
  t.match(await admin.request('PUT', `/admin/document-recognition/runtime-agents/${id}`), { status: 409, body: { code: 'RUNTIME_AGENT_NOT_PUBLISHED' } });
  const chat = (await admin.request('POST', '/agents', { name: 'Chat', agent_type: 'chat' })).body;
  t.match(await admin.request('PUT', `/admin/document-recognition/runtime-agents/${chat.agent_id}`), { status: 409, body: { code: 'AGENT_NOT_FUSION' } });
  const textOnly = (
    await admin.request('POST', '/agents', {
      name: 'Text only',
      agent_type: 'fusion',
      fusion_definition: { input_slots: [{ name: 'text', kind: 'text' }], output_slots: [{ name: 'summary', kind: 'text' }] },
    })
  ).body;
  await admin.request('POST', `/agents/${textOnly.agent_id}/publish`);
  const unsuitable = await admin.request('PUT', `/admin/document-recognition/runtime-agents/${textOnly.agent_id}`);
  t.equal(unsuitable.status, 422);
  t.same(
    unsuitable.body.detail.map((d: any) => d.msg),
    [
      'it has 0 file input slots; a runtime agent takes the upload in exactly one',
      'input slot "text" is required, but a document-recognition run gives only the file',
      'no output slot has structured_output_profile "document_field_set"',
    ],
    'every reason, named',
  );
  await admin.request('POST', `/agents/${id}/publish`);
  const registered = await admin.request('PUT', `/admin/document-recognition/runtime-agents/${id}`);
  t.equal(registered.status, 200);
  t.match(registered.body, {
    runtime_agent_id: id,
    created: true,
    available: true,
    upload_slot: { slot: 'document', accepted_content_types: ['application/pdf', 'image/png', 'image/jpeg', 'image/webp', 'text/plain'] },
    output_slot: {
      slot: 'fields',
      fields: [
        { field_id: 'invoice_number', label: 'Invoice number' },
        { field_id: 'vendor' },
        { field_id: 'due_date' },
        { field_id: 'total', type: 'number' },
      ],
    },
    execution_policy: { recognizer_key: 'local_layout', runtime_key: 'fusion_llm', model_binding: { model_provider: 'offline' } },
  });
  t.match((await admin.request('PUT', `/admin/document-recognition/runtime-agents/${id}`)).body, { created: false }, 'registering again changes nothing');
  const audit = await admin.request('GET', '/admin/audit-logs?action=document_recognition.*');
  t.equal(audit.body.items.filter((e: any) => e.action === 'document_recognition.runtime_agent.register').length, 1, 'audited once');
  const listed = await caller.request('GET', '/document-recognition/runtime-agents');
  t.same(
    listed.body.items.map((a: any) => a.runtime_agent_id),
    [id],
  );
  t.notOk('model_binding' in listed.body.items[0].execution_policy, 'the public view hides the model binding');
  t.match(await caller.request('GET', `/document-recognition/runtime-agents/${id}`), { status: 200, body: { published_agent_version_id: /^[0-9a-f-]{36}$/ } });

  // A run: the invoice is extracted, its values found on their page, the PDF kept and previewed.
  const pdf = await invoicePdf({ pages: 2 });
  const created = await caller.request('POST', '/document-recognition/runs?wait_seconds=60', upload(id, pdf, 'application/pdf', 'invoice.pdf'));
  t.equal(created.status, 201, JSON.stringify(created.body));
  const run = created.body;
  t.match(run, {
    status: 'succeeded',
    runtime_agent_id: id,
    runtime_agent_type_snapshot: 'fusion',
    runtime_binding_snapshot: { upload_slot: 'document', output_slot: 'fields', recognizer_key: 'local_layout', runtime_key: 'fusion_llm' },
    review_state: 'not_started',
    field_count: 4,
    page_count: 2,
    pdf_rendition: 'original',
    preview_pages: [{ page_number: 1 }, { page_number: 2 }],
    history_status: 'recorded',
    summary: { field_count: 4, extracted_field_count: 4, located_field_count: 4 },
    caller_token: /^[A-Za-z0-9_-]{32,}$/,
  });
  t.notOk('definition' in run.runtime_binding_snapshot, 'a public caller does not see the definition');
  const fields = Object.fromEntries(run.field_reviews.map((f: any) => [f.field_id, f]));
  t.match(fields.invoice_number, {
    extracted_value: 'INV-2026-0042',
    page_number: 1,
    review_status: 'unreviewed',
    revision_count: 0,
    is_changed_from_extracted: false,
  });
  t.match(fields.total, { extracted_value: 1250, page_number: 1 }, 'a number is found as it is written (1,250.00)');
  t.match(fields.vendor, { extracted_value: 'Acme Supplies Ltd' });
  const token = { 'x-caller-token': run.caller_token };
  const download = (url: string, headers: Record<string, string> = token) => fetch(host.url + url, { headers });
  const source = await download(run.source_document_url);
  t.equal(run.source_document_download_mode, 'object_store_proxy');
  t.same(Buffer.from(await source.arrayBuffer()), pdf, 'the source downloads as uploaded');
  t.same(Buffer.from(await (await download(run.source_pdf_url)).arrayBuffer()), pdf, 'a PDF is its own rendition');
  const preview = Buffer.from(await (await download(run.preview_pages[0].url)).arrayBuffer());
  t.same([...preview.subarray(0, 4)], PNG, 'previews are PNG images');
  t.ok(run.preview_pages[0].width <= 1000 && run.preview_pages[0].width > 500, `preview width ${run.preview_pages[0].width}`);
  const result = await (await download(run.result_download_url)).json();
  t.match(result, { run_id: run.run_id, fields: [{ field_id: 'invoice_number', value: 'INV-2026-0042', page_number: 1 }] });

  // Only the caller that made a run sees it.
  t.match(await stranger.request('GET', `/document-recognition/runs/${run.run_id}`), { status: 404, body: { code: 'DOCUMENT_RECOGNITION_RUN_NOT_FOUND' } });
  t.equal((await download(run.source_document_url, {})).status, 404, 'no download without the token');
  t.same((await stranger.request('GET', '/document-recognition/runs')).body.items, [], 'a caller without a token has no runs');
  t.same(
    (await caller.request('GET', '/document-recognition/runs', undefined, token)).body.items.map((r: any) => r.run_id),
    [run.run_id],
  );
  t.match(
    await stranger.request('PATCH', `/document-recognition/runs/${run.run_id}/field-reviews/vendor`, { value: 'x' }, { 'x-caller-token': 'A'.repeat(43) }),
    { status: 404 },
    "another caller's token reviews nothing",
  );

  // Bad uploads: 4xx before anything is stored, or a failed run with the reason; never a 500 or a hung worker.
  const refusedUpload = async (form: FormData, status: number, code: string) =>
    t.match(await caller.request('POST', '/document-recognition/runs', form, token), { status, body: { code } }, code);
  await refusedUpload(upload(id, new Uint8Array(), 'application/pdf', 'empty.pdf'), 400, 'DOCUMENT_EMPTY');
  await refusedUpload(upload(id, 'a,b\n1,2\n', 'text/csv', 'table.csv'), 415, 'DOCUMENT_TYPE');
  await refusedUpload(upload('00000000-0000-4000-8000-000000000000', pdf, 'application/pdf', 'x.pdf'), 404, 'RUNTIME_AGENT_NOT_FOUND');
  const broken = await caller.request(
    'POST',
    '/document-recognition/runs?wait_seconds=60',
    upload(id, '%PDF-1.4\nthis is no pdf', 'application/pdf', 'broken.pdf'),
    token,
  );
  t.match(broken.body, { status: 'failed', error: { code: 'DOCUMENT_UNREADABLE', message: /broken\.pdf/ } }, 'a PDF that does not parse fails its run');
  const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  await admin.request('PATCH', `/agents/${id}`, {
    fusion_definition: { ...RECOGNITION_DEFINITION, input_slots: [{ name: 'document', kind: 'file', accepted_content_types: [] }] },
  });
  await admin.request('POST', `/agents/${id}/publish`);
  const bomb = await caller.request('POST', '/document-recognition/runs?wait_seconds=60', upload(id, await docxBomb(), docx, 'bomb.docx'), token);
  t.match(bomb.body, { status: 'failed', error: { code: 'DOCUMENT_UNREADABLE', message: /bomb\.docx/ } }, 'a zip bomb fails its run with the reason');
  const text = await caller.request(
    'POST',
    '/document-recognition/runs?wait_seconds=60',
    upload(id, 'Invoice number: T-1\nTotal: 9.50', 'text/plain', 'note.txt'),
    token,
  );
  t.match(
    text.body,
    { status: 'succeeded', pdf_rendition: 'text_layout', issue_list: [{ kind: 'document_warning', message: /layout/ }] },
    'a text file gets a laid-out PDF',
  );
  t.match(Object.fromEntries(text.body.field_reviews.map((f: any) => [f.field_id, f.extracted_value])), { invoice_number: 'T-1', total: 9.5 });

  // An image is set on a page of its size and previewed; without OCR (the Unstructured API) the model sees no text, the
  // run says so, and here the required total cannot be filled.
  const canvas = createCanvas(400, 300);
  const paint = canvas.getContext('2d');
  paint.fillStyle = 'white';
  paint.fillRect(0, 0, 400, 300);
  const image = await caller.request(
    'POST',
    '/document-recognition/runs?wait_seconds=60',
    upload(id, canvas.toBuffer('image/png'), 'image/png', 'scan.png'),
    token,
  );
  t.match(image.body, {
    status: 'failed',
    pdf_rendition: 'image',
    page_count: 1,
    preview_pages: [{ page_number: 1, width: 400, height: 300 }],
    issue_list: [{ kind: 'document_warning', message: /OCR/ }],
    error: { code: 'FUSION_OUTPUT_INVALID' },
  });
  // Over the slot's own size limit: 413 before anything is stored.
  await admin.request('PATCH', `/agents/${id}`, {
    fusion_definition: { ...RECOGNITION_DEFINITION, input_slots: [{ name: 'document', kind: 'file', accepted_content_types: [], max_size_bytes: 1024 }] },
  });
  await admin.request('POST', `/agents/${id}/publish`);
  t.match((await caller.request('GET', `/document-recognition/runtime-agents/${id}`)).body, { upload_slot: { max_size_bytes: 1024 } });
  await refusedUpload(upload(id, pdf, 'application/pdf', 'big.pdf'), 413, 'DOCUMENT_TOO_LARGE');

  // A run whose stored document is gone fails with the reason instead of being retried until it is given up.
  const [orphan] = await query<{ id: string }>(
    host.databaseUrl,
    `INSERT INTO document_recognition_runs (id, runtime_agent_id, runtime_agent_version_id, runtime_agent_type_snapshot, runtime_binding_snapshot, status,
       source_object_key, source_filename, source_content_type, source_size_bytes, source_sha256, trace_id, public_caller_hash, history_recorded, created_at)
     SELECT gen_random_uuid(), runtime_agent_id, runtime_agent_version_id, runtime_agent_type_snapshot, runtime_binding_snapshot, 'queued',
       'document-recognition/gone/source/invoice.pdf', source_filename, source_content_type, source_size_bytes, source_sha256, trace_id, public_caller_hash, true, now()
     FROM document_recognition_runs WHERE id = $1 RETURNING id`,
    [run.run_id],
  );
  const orphaned = await eventually(async () => {
    const read = (await caller.request('GET', `/document-recognition/runs/${orphan!.id}`, undefined, token)).body;
    return read.status === 'failed' ? read : undefined;
  }, 'the run without its document to fail');
  t.match(orphaned, { attempt_count: 1, error: { code: 'OBJECT_NOT_FOUND', message: /no longer in the object store/ } });

  // Reviews: an effective change appends a revision; the same change again appends nothing.
  const path = (field: string) => `/document-recognition/runs/${run.run_id}/field-reviews/${field}`;
  const corrected = await caller.request(
    'PATCH',
    path('vendor'),
    { value: 'Acme Supplies GmbH', reviewer_note: 'legal name', reviewer_identity: { display_name: 'Dana' } },
    token,
  );
  t.equal(corrected.status, 200);
  t.match(corrected.body, {
    current_value: 'Acme Supplies GmbH',
    review_status: 'corrected',
    revision_count: 1,
    is_changed_from_extracted: true,
    last_revised_by: { display_name: 'Dana' },
    revision_appended: true,
    revision: {
      revision_number: 1,
      previous_value: 'Acme Supplies Ltd',
      previous_review_status: 'unreviewed',
      changed: ['value', 'review_status', 'reviewer_note'],
    },
  });
  const again = await caller.request('PATCH', path('vendor'), { value: 'Acme Supplies GmbH', reviewer_note: 'legal name' }, token);
  t.match(again.body, { revision_appended: false, revision: null, revision_count: 1 }, 'an unchanged PATCH appends nothing');
  t.match(await caller.request('PATCH', path('vendor'), {}, token), { status: 422 });
  t.match(await caller.request('PATCH', path('total'), { review_status: 'corrected' }, token), { status: 422 }, 'corrected needs a new value');
  t.match(await caller.request('PATCH', path('nope'), { review_status: 'accepted' }, token), {
    status: 404,
    body: { code: 'DOCUMENT_RECOGNITION_FIELD_NOT_FOUND' },
  });

  // Two reviewers at once on one field: both changes are kept, one after the other.
  const [first, second] = await Promise.all([
    caller.request('PATCH', path('due_date'), { reviewer_note: 'checked by A', review_status: 'accepted' }, token),
    caller.request('PATCH', path('due_date'), { reviewer_note: 'checked by B', review_status: 'accepted' }, token),
  ]);
  t.equal(first.status, 200);
  t.equal(second.status, 200);
  const dueTimeline = (await caller.request('GET', `${path('due_date')}/revisions`, undefined, token)).body;
  t.equal(dueTimeline.revision_count, 2, 'no lost update');
  t.same(
    dueTimeline.revisions.map((r: any) => r.revision_number),
    [1, 2],
  );
  t.equal(dueTimeline.revisions[1].previous_reviewer_note, dueTimeline.revisions[0].reviewer_note, 'the second saw the first');
  t.equal(dueTimeline.current_reviewer_note, dueTimeline.revisions[1].reviewer_note);
  const vendorTimeline = (await caller.request('GET', `${path('vendor')}/revisions`, undefined, token)).body;
  t.match(vendorTimeline, {
    history_status: 'recorded',
    baseline: { value: 'Acme Supplies Ltd', page_number: 1 },
    current_value: 'Acme Supplies GmbH',
    current_review_status: 'corrected',
    current_reviewer_note: 'legal name',
    revisions: [{ revision_number: 1, value: 'Acme Supplies GmbH' }],
  });
  // The ledger is append-only in the database itself.
  for (const statement of ['UPDATE document_recognition_field_revisions SET reviewer_note = NULL', 'DELETE FROM document_recognition_field_revisions'])
    await t.rejects(query(host.databaseUrl, statement), /append-only/, statement.split(' ')[0]);

  // Administrators: every run, the overview, and reviews under their own id.
  const overview = (await admin.request('GET', '/admin/document-recognition/overview')).body;
  t.match(overview, { run_count: 6, by_status: { succeeded: 2, failed: 4 }, review_progress: { in_progress: 1, not_started: 1 }, runtime_agent_count: 1 });
  t.equal((await admin.request('GET', '/admin/document-recognition/runs?status=failed')).body.items.length, 4);
  t.equal((await admin.request('GET', '/admin/document-recognition/runs?review_state=in_progress')).body.items[0].run_id, run.run_id);
  const adminView = (await admin.request('GET', `/admin/document-recognition/runs/${run.run_id}`)).body;
  t.match(adminView.runtime_binding_snapshot, { definition: { runtime_key: 'fusion_llm' }, model_binding: { model_provider: 'offline' } });
  t.equal(adminView.source_document_url, `/admin/document-recognition/runs/${run.run_id}/source-document`);
  const byAdmin = await admin.request('PATCH', `/admin/document-recognition/runs/${run.run_id}/field-reviews/invoice_number`, {
    review_status: 'accepted',
    reviewer_identity: { display_name: 'Ops' },
  });
  t.match(byAdmin.body, { review_status: 'accepted', last_revised_by: { display_name: 'Ops', admin_user_id: /./ } }, "an administrator's id is recorded");
  t.match(await admin.request('GET', '/admin/document-recognition/runtime-agents'), {
    status: 200,
    body: { items: [{ runtime_agent_id: id, registered_by: /./ }] },
  });

  // Import into evaluation: only reviewed runs, never twice; freeze copies the documents; the run scores field by field.
  const dataset = (await admin.request('POST', '/evaluation-datasets', { name: 'Invoices', task_type: 'document_recognition' })).body;
  const importRuns = (runIds: string[]) =>
    admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/document-recognition-runs/import`, { run_id_list: runIds });
  t.match(await importRuns([run.run_id]), { status: 409, body: { code: 'DOCUMENT_RECOGNITION_RUN_NOT_REVIEWED' } }, 'total is still unreviewed');
  await caller.request('PATCH', path('total'), { review_status: 'rejected', reviewer_note: 'unreadable' }, token);
  t.match(await importRuns([broken.body.run_id]), { status: 409, body: { code: 'DOCUMENT_RECOGNITION_RUN_NOT_REVIEWED' } }, 'a failed run is not reviewed');
  t.match(await importRuns([run.run_id, run.run_id]), { status: 422 });
  const qa = (await admin.request('POST', '/evaluation-datasets', { name: 'QA', task_type: 'qa' })).body;
  t.match(await admin.request('POST', `/evaluation-datasets/${qa.dataset_id}/document-recognition-runs/import`, { run_id_list: [run.run_id] }), {
    status: 409,
    body: { code: 'EVALUATION_DATASET_TASK_TYPE' },
  });
  t.match(await importRuns([run.run_id]), { status: 200, body: { item_count: 1 } });
  t.match(await importRuns([run.run_id]), { status: 409, body: { code: 'EVALUATION_ITEM_DUPLICATE_RUN' } });
  const items = (await admin.request('GET', `/evaluation-datasets/${dataset.dataset_id}/items`)).body.items;
  t.match(items[0], {
    source_run_id: run.run_id,
    question: 'invoice.pdf',
    source_document: { filename: 'invoice.pdf', content_type: 'application/pdf' },
    expected_fields: { invoice_number: 'INV-2026-0042', vendor: 'Acme Supplies GmbH', due_date: '2026-12-31' },
    metadata: { rejected_field_ids: ['total'] },
  });
  t.notOk('total' in items[0].expected_fields, 'a rejected field is expected nothing');
  const snapshot = await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/freeze`);
  t.equal(snapshot.status, 201);
  t.match(snapshot.body, { frozen: true, item_count: 1, source_csv_filename: null });
  const [copied] = await query(host.databaseUrl, "SELECT source_document->>'object_key' AS key FROM evaluation_dataset_items WHERE dataset_id = $1", [
    snapshot.body.dataset_id,
  ]);
  t.match(copied!.key, new RegExp(`^evaluation/${dataset.dataset_id}/snapshots/.+/documents/1-invoice\\.pdf$`), 'the snapshot holds its own copy');
  t.match(await admin.request('POST', `/agents/${chat.agent_id}/evaluation-runs`, { dataset_id: snapshot.body.dataset_id }), {
    status: 409,
    body: { code: 'EVALUATION_DATASET_TASK_TYPE' },
  });
  const evaluation = await admin.request('POST', `/agents/${id}/evaluation-runs`, { dataset_id: snapshot.body.dataset_id });
  t.equal(evaluation.status, 201, JSON.stringify(evaluation.body));
  const done = await eventually(async () => {
    const read = (await admin.request('GET', `/agents/${id}/evaluation-runs/${evaluation.body.run_id}`)).body;
    return read.execution_state === 'completed' ? read : undefined;
  }, 'the evaluation run to complete');
  t.match(done, { items_completed: 1, items_failed: 0 });
  const [scored] = (await admin.request('GET', `/agents/${id}/evaluation-runs/${evaluation.body.run_id}/results`)).body.items;
  t.match(scored, { status: 'succeeded', judge_status: 'skipped', response_source: 'document_recognition' });
  const byField = Object.fromEntries(scored.field_scores.map((f: any) => [f.field_id, f]));
  t.match(byField, {
    invoice_number: { expected: 'INV-2026-0042', predicted: 'INV-2026-0042', exact_match: true, normalized_match: true },
    due_date: { exact_match: true },
    vendor: { expected: 'Acme Supplies GmbH', predicted: 'Acme Supplies Ltd', exact_match: false, normalized_match: false },
  });
  t.same(
    scored.field_scores.map((f: any) => f.field_id),
    ['invoice_number', 'vendor', 'due_date'],
    "in the schema's order, without the rejected field",
  );
  t.match(scored.rule_score, { exact_match: 0.6667, token_f1: 0.6667, pass_rate: 0 });

  const csv = await admin.request('GET', `/agents/${id}/evaluation-runs/${evaluation.body.run_id}/results.csv`);
  const [csvRow] = parse(csv.body, { columns: true }) as Record<string, string>[];
  t.same(JSON.parse(csvRow!.field_scores_json!), scored.field_scores, 'results.csv carries the field scores');

  // A removed runtime agent takes no new runs; its runs stay readable and reviewable.
  t.match(await admin.request('DELETE', `/admin/document-recognition/runtime-agents/${id}`), { status: 200, body: { status: 'removed' } });
  await refusedUpload(upload(id, pdf, 'application/pdf', 'late.pdf'), 404, 'RUNTIME_AGENT_NOT_FOUND');
  t.match(await caller.request('GET', `/document-recognition/runs/${run.run_id}`, undefined, token), { status: 200 });
  t.match(await admin.request('DELETE', `/admin/document-recognition/runtime-agents/${id}`), { status: 404, body: { code: 'RUNTIME_AGENT_NOT_FOUND' } });
});
