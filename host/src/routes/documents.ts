import { pipeline } from 'node:stream/promises';
import { attachmentDisposition } from '@agent-host/sdk';
import { z } from 'zod';
import { UploadSlots, withUpload } from '../http/upload.js';
import { pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const UPLOAD_FIELD = 'file';

const listQuery = z.object({ ...pagingFields, status: z.enum(['uploaded', 'processing', 'indexed', 'failed']).optional() }).strict();

/** Documents of a knowledge source (spec 2.6, 4.8): multipart upload, list, detail, delete and the same-origin download. */
export const documentRoutes: RouteFactory = (app) => {
  const knowledge = app.knowledge!;
  const log = app.logger.child({ component: 'document-download' });
  const sourceId = (params: Record<string, string>) => String(params.source_id);
  const documentId = (params: Record<string, string>) => String(params.document_id);
  const uploads = new UploadSlots(app.config.knowledge.upload_concurrency);
  return [
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/documents',
      access: { permission: 'knowledge.write' },
      multipart: { field: UPLOAD_FIELD },
      summary: 'Upload a document (multipart/form-data, field "file")',
      success: { status: 201, description: 'The stored document, status uploaded' },
      refusals: {
        413: 'The file is larger than [knowledge] upload_max_bytes',
        415: 'No parser reads the type, or the bytes contradict the declared type',
        503: 'Too many uploads are being received ([knowledge] upload_concurrency); see Retry-After',
      },
      handler: async (req, res, { operation }) => {
        const upload = { field: UPLOAD_FIELD, maxBytes: knowledge.documents.uploadMaxBytes, checkContentType: (type: string) => knowledge.documents.checkContentType(type) };
        const created = await uploads.run(res, () => withUpload(req, upload, (file) => knowledge.documents.upload(sourceId(req.params), file, operation)));
        res.status(201);
        return created;
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/documents',
      access: { permission: 'knowledge.read' },
      summary: 'Documents of a source, newest first ({items, next_cursor, limit}); filter by status',
      query: listQuery,
      handler: async (req, _res, { query }) => knowledge.documents.list(sourceId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/documents/:document_id',
      access: { permission: 'knowledge.read' },
      summary: 'One document: status, vector_status, point counts and download fields',
      handler: async (req) => knowledge.documents.get(sourceId(req.params), documentId(req.params)),
    }),
    route({
      method: 'del',
      path: '/knowledge-sources/:source_id/documents/:document_id',
      access: { permission: 'knowledge.write' },
      summary: 'Delete a document with its chunks, vectors and stored file',
      handler: async (req, _res, { operation }) => knowledge.documents.delete(sourceId(req.params), documentId(req.params), operation),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/documents/:document_id/download',
      access: { permission: 'knowledge.read' },
      summary: 'The original document through the host (same-origin proxy), with its original filename',
      handler: async (req, res) => {
        const file = await knowledge.documents.open(sourceId(req.params), documentId(req.params));
        // Uploaded bytes are sent as an attachment the browser neither sniffs nor runs.
        res.writeHead(200, {
          'content-type': file.contentType,
          'content-length': String(file.size),
          'content-disposition': attachmentDisposition(file.filename),
          'x-content-type-options': 'nosniff',
          'content-security-policy': "default-src 'none'; sandbox",
          'cache-control': 'private, no-cache',
        });
        try {
          await pipeline(file.body, res);
        } catch (error) {
          log.warn({ err: error, document_id: documentId(req.params) }, 'document download ended early');
        }
        return undefined;
      },
    }),
  ];
};
