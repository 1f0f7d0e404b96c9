// Document upload, download and delete (spec 2.6, 4.8): multipart, the
// original filename and content type kept, 413 over the limit, 415 for types
// no parser reads, and deletion taking the chunks and vectors with it.
import { randomUUID } from 'node:crypto';
import { extensionPoints, type Retriever } from '@agent-host/sdk';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, ingest, upload, uploadOk } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';

t.test('documents of a knowledge source', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST__KNOWLEDGE__UPLOAD_MAX_BYTES: '2000' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin);
  const base = `/knowledge-sources/${source.source_id}/documents`;

  t.test('an upload keeps its original filename and content type and is stored', async (t) => {
    const text = 'Réunion: the café opens at eight.\n\nSecond paragraph.';
    const created = await upload(admin, source.source_id, { filename: 'Café menu (v2).txt', contentType: 'text/plain', data: text });
    t.equal(created.status, 201);
    t.match(created.body, {
      filename: 'Café menu (v2).txt',
      content_type: 'text/plain',
      size_bytes: Buffer.byteLength(text),
      status: 'uploaded',
      processing_status: 'uploaded',
      vector_status: 'reindex_required',
      expected_point_count: null,
      download_mode: 'object_store_proxy',
      download_url: `${base}/${created.body.document_id}/download`,
    });
    t.type(created.body.download_warning, 'string', 'the proxy mode says why');
    const download = await fetch(host.url + created.body.download_url, { headers: { cookie: admin.cookieHeader('/') } });
    t.equal(download.status, 200);
    t.equal(await download.text(), text, 'the download streams the original bytes');
    t.equal(download.headers.get('content-type'), 'text/plain', 'with the original content type');
    t.match(download.headers.get('content-disposition'), /filename\*=UTF-8''Caf%C3%A9%20menu%20%28v2%29\.txt/, 'with the original filename');
    const list = await admin.request('GET', base);
    t.same(
      list.body.items.map((d: { filename: string }) => d.filename),
      ['Café menu (v2).txt'],
    );
    t.equal((await admin.request('GET', `${base}?status=indexed`)).body.items.length, 0, 'the list filters by status');
  });

  t.test('413 over the configured limit, 415 for a type no parser reads, 400 without a file', async (t) => {
    const big = await upload(admin, source.source_id, { filename: 'big.txt', contentType: 'text/plain', data: 'x'.repeat(2001) });
    t.equal(big.status, 413);
    t.match(big.body.detail, /upload limit of 2000 bytes/);
    const huge = await upload(admin, source.source_id, { filename: 'huge.txt', contentType: 'text/plain', data: 'x'.repeat(200_000) });
    t.equal(huge.status, 413, 'a body far over the limit is refused by its length before it is read');
    const image = await upload(admin, source.source_id, { filename: 'photo.gif', contentType: 'image/gif', data: 'GIF89a' });
    t.equal(image.status, 415);
    t.match(image.body.detail, /no document parser handles content type "image\/gif"; supported: .*text\/plain/);
    const json = await admin.request('POST', base, { file: 'not multipart' });
    t.equal(json.status, 415, 'a JSON body is not an upload');
    t.equal(
      (await upload(admin, source.source_id, { filename: 'a.txt', contentType: 'text/plain', data: 'hi' }, 'attachment')).status,
      400,
      'the file must be in the field "file"',
    );
    const stored = await query(host.databaseUrl, "SELECT filename FROM knowledge_documents WHERE filename IN ('big.txt', 'huge.txt', 'photo.gif', 'a.txt')");
    t.same(stored, [], 'a refused upload stores nothing');
    t.equal((await admin.request('GET', `/knowledge-sources/${randomUUID()}/documents`)).status, 404);
  });

  t.test('an upload sent as application/octet-stream is typed by its bytes or name, and a type its bytes contradict is refused', async (t) => {
    const notes = await upload(admin, source.source_id, {
      filename: 'notes.md',
      contentType: 'application/octet-stream',
      data: '# Notes\n\nThe octet-stream upload is typed by its name.',
    });
    t.equal(notes.status, 201, 'curl -F file=@notes.md (octet-stream) is accepted');
    t.equal(notes.body.content_type, 'text/markdown', 'as Markdown, from its extension');
    const job = await ingest(admin, source.source_id, { document_ids: [notes.body.document_id] });
    t.equal(job.status, 'succeeded', 'and is ingested');
    const pdfBytes = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n';
    const pdf = await upload(admin, source.source_id, { filename: 'report.bin', contentType: 'application/octet-stream', data: pdfBytes });
    t.equal(pdf.body.content_type, 'application/pdf', 'binary content is typed by its signature before its name');
    const lying = await upload(admin, source.source_id, { filename: 'report.txt', contentType: 'text/plain', data: pdfBytes });
    t.equal(lying.status, 415);
    t.match(lying.body.detail, /"report\.txt" is declared as text\/plain, but its content is application\/pdf/);
    const unknown = await upload(admin, source.source_id, { filename: 'blob', contentType: 'application/octet-stream', data: 'some bytes' });
    t.equal(unknown.status, 415);
    t.match(unknown.body.detail, /cannot be told from its name or content/);
  });

  t.test('deleting a document removes its chunks, its vectors and its file', async (t) => {
    const document = await uploadOk(admin, source.source_id, {
      filename: 'gone.md',
      contentType: 'text/markdown',
      data: '# Gone\n\nThis document will be deleted after it is indexed.',
    });
    const job = await ingest(admin, source.source_id, { document_ids: [document.document_id] });
    t.equal(job.status, 'succeeded');
    const [row] = await query<{ vector_collection: string }>(host.databaseUrl, 'SELECT vector_collection FROM knowledge_documents WHERE id = $1', [
      document.document_id,
    ]);
    const retriever = host.app.kernel.registry(extensionPoints.retrievers).get(host.app.config.knowledge.retriever) as Retriever;
    const points = () => retriever.count(row!.vector_collection, { document_id: document.document_id });
    t.ok((await points()) > 0, 'the document has points');
    const deleted = await admin.request('DELETE', `${base}/${document.document_id}`);
    t.same(deleted.body, { status: 'deleted', document_id: document.document_id });
    t.equal(await points(), 0, 'its points are gone');
    t.same(await query(host.databaseUrl, 'SELECT id FROM knowledge_chunks WHERE document_id = $1', [document.document_id]), [], 'its chunks are gone');
    t.equal((await admin.request('GET', `${base}/${document.document_id}`)).status, 404);
    t.equal((await fetch(`${host.url}${base}/${document.document_id}/download`, { headers: { cookie: admin.cookieHeader('/') } })).status, 404);
    const actions = await query<{ action: string }>(host.databaseUrl, 'SELECT action FROM admin_action_audits WHERE target_id = $1 ORDER BY id', [
      document.document_id,
    ]);
    t.same(
      actions.map((a) => a.action),
      ['knowledge_document.upload', 'knowledge_document.delete'],
    );
  });
});
