// Knowledge through the REST API, as a console would use it: sources,
// multipart uploads, ingestion jobs waited on to their end.
import type { AdminClient } from './host.js';
import { waitFor } from './job-counter.js';

export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export async function createSource(admin: AdminClient, body: Record<string, unknown> = {}): Promise<{ source_id: string } & Record<string, any>> {
  const response = await admin.request('POST', '/knowledge-sources', { name: 'Handbook', ...body });
  if (response.status !== 201) throw new Error(`source not created: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** POSTs one file as multipart/form-data (field `file`); resolves with the status and parsed body. */
export async function upload(admin: AdminClient, sourceId: string, file: { filename: string; contentType: string; data: string | Uint8Array }, field = 'file') {
  const form = new FormData();
  form.append(field, new Blob([file.data], { type: file.contentType }), file.filename);
  const { status, body } = await admin.request('POST', `/knowledge-sources/${sourceId}/documents`, form);
  return { status, body };
}

export async function uploadOk(admin: AdminClient, sourceId: string, file: { filename: string; contentType: string; data: string | Uint8Array }) {
  const response = await upload(admin, sourceId, file);
  if (response.status !== 201) throw new Error(`upload of ${file.filename} refused: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { document_id: string } & Record<string, any>;
}

const ENDED = ['succeeded', 'partially_failed', 'failed'];

/** Polls `GET /ingestion-jobs/{job_id}` until the job ends. */
export async function waitForJob(admin: AdminClient, jobId: string, timeoutMs = 60_000) {
  const job = await waitFor(
    `ingestion job ${jobId}`,
    async () => (await admin.request('GET', `/ingestion-jobs/${jobId}`)).body,
    (body) => ENDED.includes(body?.status),
    timeoutMs,
  );
  return job as Record<string, any>;
}

/** Starts ingestion of a source (optionally with a body) and waits for the job to end. */
export async function ingest(admin: AdminClient, sourceId: string, body: Record<string, unknown> = {}) {
  const started = await admin.request('POST', `/knowledge-sources/${sourceId}/ingest`, body);
  if (started.status !== 202) throw new Error(`ingest refused: ${started.status} ${JSON.stringify(started.body)}`);
  return waitForJob(admin, started.body.job_id);
}
