// The host's REST API as a console uses it, for the benchmarks: the bootstrap administrator's cookie session,
// JSON requests and multipart uploads, a bounded-concurrency loop, and the knowledge flow (sources, uploads,
// ingestion jobs waited on to their end, every document checked for verified point counts).
import { sleep } from './host.mjs';

/** Start the host with `adminEnv(credentials)` so that `adminClient(url, credentials)` can log in. */
export const adminEnv = ({ username, password }) => ({ ADMIN_BOOTSTRAP_USERNAME: username, ADMIN_BOOTSTRAP_PASSWORD: password });

/** The REST API as the bootstrap administrator: `{id, cookie, request(method, route, body), upload(route, file)}`; a non-2xx answer throws. */
export async function adminClient(url, credentials) {
  const login = await fetch(`${url}/admin/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const { admin_user_id: id } = await login.json();
  const send = async (method, route, headers, body) => {
    const res = await fetch(`${url}${route}`, { method, headers: { cookie, ...headers }, body });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const request = (method, route, body) => send(method, route, body ? { 'content-type': 'application/json' } : {}, body && JSON.stringify(body));
  /** POSTs one file as multipart/form-data (field `file`, as the upload route takes it). */
  const upload = (route, { filename, contentType, data }) => {
    const form = new FormData();
    form.append('file', new Blob([data], { type: contentType }), filename);
    return send('POST', route, {}, form);
  };
  return { id, cookie, request, upload };
}

/** Runs `task` over `items`, `concurrency` at a time. */
export async function eachLimited(items, concurrency, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

const ENDED = ['succeeded', 'partially_failed', 'failed'];

/** Starts ingestion of a source and polls `GET /ingestion-jobs/{id}` until the job ends; resolves with the job. */
export async function ingestAndWait(admin, sourceId, body = {}, { pollMs = 200, timeoutMs = 3_600_000 } = {}) {
  const started = await admin.request('POST', `/knowledge-sources/${sourceId}/ingest`, body);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await admin.request('GET', `/ingestion-jobs/${started.job_id}`);
    if (ENDED.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`ingestion job ${started.job_id} did not end in ${timeoutMs} ms: ${JSON.stringify(job)}`);
    await sleep(pollMs);
  }
}

/** Every document of a source, through the paged list. */
export async function listDocuments(admin, sourceId) {
  const documents = [];
  let cursor = null;
  do {
    const page = await admin.request('GET', `/knowledge-sources/${sourceId}/documents?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    documents.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return documents;
}

/**
 * Checks that every document of the source is indexed with verified points (`status` and `vector_status`
 * `indexed`, `actual_point_count` equal to `expected_point_count`, counted by the host in the vector store);
 * throws naming the first few that are not. Resolves with `{documents, chunks}`.
 */
export async function verifiedCounts(admin, sourceId) {
  const documents = await listDocuments(admin, sourceId);
  const bad = documents.filter((d) => d.status !== 'indexed' || d.vector_status !== 'indexed' || d.actual_point_count !== d.expected_point_count);
  if (bad.length) {
    const sample = bad.slice(0, 3).map((d) => ({
      filename: d.filename,
      status: d.status,
      vector_status: d.vector_status,
      expected: d.expected_point_count,
      actual: d.actual_point_count,
      error: d.error_message,
    }));
    throw new Error(`${bad.length} of ${documents.length} documents are not indexed with verified point counts: ${JSON.stringify(sample)}`);
  }
  return { documents: documents.length, chunks: documents.reduce((n, d) => n + d.expected_point_count, 0) };
}
