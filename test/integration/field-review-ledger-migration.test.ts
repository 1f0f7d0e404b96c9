// A document-recognition run made before the field-review ledger (migration 0033): its fields were reviewed when no
// revision was kept, so after the migration its timelines say `history_status=unrecorded` with the extracted baseline
// and the current value, and the reviews made from then on are appended to the ledger all the same.
import { randomUUID } from 'node:crypto';
import type { Logger } from '@agent-host/sdk';
import t from 'tap';
import { openDatabase } from '../../core/src/db/database.js';
import { migrate } from '../../core/src/db/migrator.js';
import { MIGRATIONS_DIR } from '../../core/src/paths.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

const noop = () => {};
const quietLog: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => quietLog };

t.test('a run from before the ledger reports history_status=unrecorded, and takes new revisions', async (t) => {
  const url = await createTestDatabase(t, { empty: true });
  const sequelize = openDatabase(url, 2);
  const applied = await migrate(sequelize, MIGRATIONS_DIR, quietLog, '0032-document-recognition.js');
  await sequelize.close();
  t.equal(applied.at(-1), '0032-document-recognition.js', 'migrated up to the runs, not the ledger');

  const runId = randomUUID();
  const binding = {
    agent_name: 'Old invoices',
    definition: {
      runtime_key: 'fusion_llm',
      instructions: '',
      input_slots: [{ name: 'document', kind: 'file', required: true, description: '', accepted_content_types: [], max_size_bytes: null }],
      output_slots: [
        {
          name: 'fields',
          kind: 'structured_json',
          description: '',
          structured_output_schema: { type: 'object', properties: { total: { type: 'number' } } },
          structured_output_profile: 'document_field_set',
          output_instruction_fragment: null,
        },
      ],
    },
    upload_slot: 'document',
    output_slot: 'fields',
    model_binding: { model_name: 'offline', model_provider: 'offline', model_temperature: 0, source: 'global_fallback' },
    recognizer_key: 'local_layout',
  };
  await query(
    url,
    `INSERT INTO document_recognition_runs (id, runtime_agent_id, runtime_agent_version_id, runtime_agent_type_snapshot, runtime_binding_snapshot, status,
       source_object_key, source_filename, source_content_type, source_size_bytes, source_sha256, trace_id, created_at, started_at, completed_at)
     VALUES ($1, $2, $3, 'fusion', $4, 'succeeded', 'document-recognition/old/source/invoice.pdf', 'invoice.pdf', 'application/pdf', 1024, $5, 'trace', now(), now(), now())`,
    [runId, randomUUID(), randomUUID(), JSON.stringify(binding), 'a'.repeat(64)],
  );
  // Reviewed back then: the value was corrected, and nothing recorded how.
  await query(
    url,
    `INSERT INTO document_recognition_fields (run_id, field_id, position, label, extracted_value, current_value, current_review_status, current_reviewer_note)
     VALUES ($1, 'total', 0, 'Total', '1250', '1350', 'corrected', 'fixed before the ledger')`,
    [runId],
  );

  const host = await startTestHost(t, { databaseUrl: url });
  const admin = new AdminClient(host.url);
  await admin.login();
  const timeline = `/admin/document-recognition/runs/${runId}/field-reviews/total/revisions`;
  t.match((await admin.request('GET', timeline)).body, {
    history_status: 'unrecorded',
    baseline: { value: 1250 },
    current_value: 1350,
    current_review_status: 'corrected',
    current_reviewer_note: 'fixed before the ledger',
    revision_count: 0,
    revisions: [],
  });
  t.match((await admin.request('GET', `/admin/document-recognition/runs/${runId}`)).body, {
    history_status: 'unrecorded',
    field_reviews: [{ field_id: 'total', current_value: 1350, is_changed_from_extracted: true, revision_count: 0 }],
  });

  const reviewed = await admin.request('PATCH', `/admin/document-recognition/runs/${runId}/field-reviews/total`, { value: 1300 });
  t.match(reviewed.body, { revision_appended: true, revision: { revision_number: 1, previous_value: 1350, previous_review_status: 'corrected' } });
  t.match((await admin.request('GET', timeline)).body, {
    history_status: 'unrecorded',
    current_value: 1300,
    revisions: [{ revision_number: 1, value: 1300 }],
  });
});
