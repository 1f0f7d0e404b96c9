// Evaluation datasets (spec 4.9, issue 19): create, CSV import (quoted fields, embedded newlines, BOM, CRLF, several
// accepted answers), the source CSV kept and served, 422s naming the row and column with nothing changed, frozen
// snapshots that never change, the delete guard, and the document_recognition task type's guard.
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const CSV =
  '\ufeffquestion,expected_answer,expected_answer_2,domain,difficulty,source,metadata\r\n' +
  'How long do returns take?,30 days,thirty days,returns,easy,handbook,"{""ticket"": 7}"\r\n' +
  '"Where do I send a parcel, and how?","To the depot,\nby courier",,shipping,hard,faq,\r\n';

t.test('evaluation datasets', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const importCsv = async (datasetId: string, text: string, filename = 'faq.csv', type = 'text/csv') => {
    const form = new FormData();
    form.append('file', new Blob([text], { type }), filename);
    return admin.request('POST', `/evaluation-datasets/${datasetId}/import`, form);
  };
  const create = async (body: Record<string, unknown> = {}) => {
    const created = await admin.request('POST', '/evaluation-datasets', { name: 'Returns FAQ', task_type: 'qa', ...body });
    t.equal(created.status, 201, JSON.stringify(created.body));
    return created.body as Record<string, any>;
  };

  const dataset = await create({ description: 'what customers ask' });
  t.match(dataset, { task_type: 'qa', frozen: false, item_count: 0, parent_dataset_id: null, source_csv_filename: null, source_csv_download_url: null });
  t.equal((await admin.request('POST', '/evaluation-datasets', { name: 'x', task_type: 'essay' })).status, 422, 'an unknown task_type is refused');
  t.equal((await admin.request('GET', '/evaluation-datasets/not-a-uuid')).status, 404);

  await t.test('a CSV import fills the items and keeps the file', async (t) => {
    const imported = await importCsv(dataset.dataset_id, CSV);
    t.equal(imported.status, 200, JSON.stringify(imported.body));
    t.match(imported.body, {
      item_count: 2,
      source_csv_filename: 'faq.csv',
      source_csv_content_type: 'text/csv',
      source_csv_size_bytes: Buffer.byteLength(CSV),
    });
    t.type(imported.body.source_csv_uploaded_at, 'string');
    const items = (await admin.request('GET', `/evaluation-datasets/${dataset.dataset_id}/items`)).body;
    t.match(items, { total: 2, offset: 0, limit: 100 });
    t.same(
      items.items.map((i: any) => [i.position, i.question, i.expected_answers, i.domain, i.difficulty, i.source, i.metadata]),
      [
        [1, 'How long do returns take?', ['30 days', 'thirty days'], 'returns', 'easy', 'handbook', { ticket: 7 }],
        [2, 'Where do I send a parcel, and how?', ['To the depot,\nby courier'], 'shipping', 'hard', 'faq', {}],
      ],
      'BOM, CRLF, quoted commas and newlines, several accepted answers, slices and metadata',
    );
    const second = (await admin.request('GET', `/evaluation-datasets/${dataset.dataset_id}/items?offset=1&limit=1`)).body;
    t.same(
      second.items.map((i: any) => i.position),
      [2],
      'paged by offset and limit',
    );
    const download = await admin.request('GET', imported.body.source_csv_download_url);
    t.equal(download.status, 200);
    // fetch's text() drops the BOM; the length counts it.
    t.equal(download.body, CSV.slice(1), 'the source CSV comes back as uploaded');
    t.equal(Number(download.headers.get('content-length')), Buffer.byteLength(CSV));
    t.match(download.headers.get('content-disposition'), /attachment; filename="faq.csv"/);
  });

  await t.test('a bad file is refused naming the row and column, and changes nothing', async (t) => {
    const refused = async (text: string, loc: string[], msg: RegExp) => {
      const response = await importCsv(dataset.dataset_id, text, 'bad.csv');
      t.equal(response.status, 422, text);
      t.ok(
        response.body.detail.some((d: { loc: string[]; msg: string }) => d.loc.join('|') === ['body', 'file', ...loc].join('|') && msg.test(d.msg)),
        `${loc.join(' ')} ${msg}: ${JSON.stringify(response.body.detail)}`,
      );
    };
    await refused('question,expected_answr\nq,a\n', ['row 1', 'expected_answr'], /unknown column/);
    await refused('question,expected_answer\nq,a\n,b\n', ['row 3', 'question'], /question is empty/);
    await refused('question,expected_answer\nq,\n', ['row 2', 'expected_answer'], /no expected answer/);
    await refused('question,expected_answer,metadata\nq,a,[1]\n', ['row 2', 'metadata'], /JSON object/);
    await refused('question,expected_answer\nq,a,extra\n', ['row 2'], /not valid CSV/);
    await refused('', [], /empty/);
    const unchanged = (await admin.request('GET', `/evaluation-datasets/${dataset.dataset_id}`)).body;
    t.match(unchanged, { item_count: 2, source_csv_filename: 'faq.csv' }, 'the items and the source CSV are as before');
    const image = await importCsv(dataset.dataset_id, 'GIF89a', 'x.gif', 'image/gif');
    t.equal(image.status, 415);
  });

  await t.test('freeze: an immutable snapshot with copies; the parent stays editable; the delete guard', async (t) => {
    const empty = await create({ name: 'Empty' });
    const nothing = await admin.request('POST', `/evaluation-datasets/${empty.dataset_id}/freeze`);
    t.match(nothing, { status: 400, body: { code: 'EVALUATION_DATASET_EMPTY' } });

    const frozen = await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/freeze`);
    t.equal(frozen.status, 201);
    const snapshot = frozen.body;
    t.match(snapshot, { frozen: true, parent_dataset_id: dataset.dataset_id, item_count: 2, name: 'Returns FAQ', source_csv_filename: 'faq.csv' });
    t.type(snapshot.frozen_at, 'string');
    t.not(snapshot.dataset_id, dataset.dataset_id);
    t.match(await importCsv(snapshot.dataset_id, CSV), { status: 409, body: { code: 'EVALUATION_DATASET_FROZEN' } }, 'a snapshot never changes');
    t.match(await admin.request('POST', `/evaluation-datasets/${snapshot.dataset_id}/freeze`), { status: 409, body: { code: 'EVALUATION_DATASET_FROZEN' } });

    const replaced = await importCsv(dataset.dataset_id, 'question,expected_answer\nWhat is new?,Everything\n', 'v2.csv');
    t.match(replaced.body, { item_count: 1, source_csv_filename: 'v2.csv' }, 'the parent takes a new CSV');
    const kept = (await admin.request('GET', `/evaluation-datasets/${snapshot.dataset_id}/items`)).body;
    t.equal(kept.total, 2, "the snapshot's items did not change");
    t.equal((await admin.request('GET', snapshot.source_csv_download_url)).body, CSV.slice(1), "the snapshot's copy of the source CSV did not change");

    const list = (await admin.request('GET', '/evaluation-datasets?frozen=true')).body;
    t.same(
      list.items.map((d: any) => d.dataset_id),
      [snapshot.dataset_id],
      'filtered by frozen',
    );

    const guarded = await admin.request('DELETE', `/evaluation-datasets/${dataset.dataset_id}`);
    t.equal(guarded.status, 409);
    t.match(guarded.body, {
      code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS',
      detail: { code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS', evaluation_run_count: 0, snapshot_count: 1, referencing_agents: [] },
    });
    t.equal((await admin.request('DELETE', `/evaluation-datasets/${snapshot.dataset_id}`)).status, 200, 'a snapshot nothing runs on is deleted');
    t.equal((await admin.request('DELETE', `/evaluation-datasets/${dataset.dataset_id}`)).status, 200, 'then its parent');
    t.equal((await admin.request('GET', `/evaluation-datasets/${dataset.dataset_id}`)).status, 404);
  });

  await t.test('items without a persisted source CSV cannot be frozen (400)', async (t) => {
    const orphan = await create({ name: 'Orphan' });
    t.equal((await importCsv(orphan.dataset_id, CSV)).status, 200);
    await query(host.databaseUrl, 'UPDATE evaluation_datasets SET source_csv_object_key = NULL WHERE id = $1', [orphan.dataset_id]);
    t.match(await admin.request('POST', `/evaluation-datasets/${orphan.dataset_id}/freeze`), {
      status: 400,
      body: { code: 'EVALUATION_DATASET_NO_SOURCE_CSV' },
    });
  });

  await t.test('a document_recognition dataset takes no CSV', async (t) => {
    const recognition = await create({ name: 'Invoices', task_type: 'document_recognition' });
    t.match(await importCsv(recognition.dataset_id, CSV), { status: 409, body: { code: 'EVALUATION_DATASET_TASK_TYPE' } });
  });
});
