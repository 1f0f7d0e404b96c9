import { z } from 'zod';
import { sendAttachment } from '../http/attachment.js';
import { UploadSlots, withUpload } from '../http/upload.js';
import { knowledgeDocument } from '../schemas/knowledge.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const UPLOAD_FIELD = 'file';

const sourceNotFound = 'No such knowledge source (KNOWLEDGE_SOURCE_NOT_FOUND)';
const documentNotFound = { 404: `${sourceNotFound}, or no such document in it (DOCUMENT_NOT_FOUND)` };
const listQuery = z.object({ ...pagingFields, status: z.enum(['uploaded', 'processing', 'indexed', 'failed']).optional() }).strict();

/** Documents of a knowledge source (spec 2.6, 4.8): multipart upload, list, detail, delete and the same-origin download. */
export const documentRoutes: RouteFactory<'knowledge'> = (domains, app) => {
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
      success: { status: 201, description: 'The stored document, status uploaded', schema: knowledgeDocument },
      refusals: {
        400: 'The body is not multipart/form-data with a named file in "file" (BAD_REQUEST)',
        404: sourceNotFound,
        409: 'A managed_correction source takes no uploads (MANAGED_SOURCE_READ_ONLY)',
        413: 'The file is larger than [knowledge] upload_max_bytes',
        415: 'No parser reads the type, or the bytes contradict the declared type',
        503: 'Too many uploads are being received ([knowledge] upload_concurrency); see Retry-After',
      },
      handler: async (req, res, { operation }) => {
        const upload = {
          field: UPLOAD_FIELD,
          maxBytes: domains.knowledge.documents.uploadMaxBytes,
          checkContentType: (type: string) => domains.knowledge.documents.checkContentType(type),
        };
        const created = await uploads.run(res, () =>
          withUpload(req, upload, (file) => domains.knowledge.documents.upload(sourceId(req.params), file, operation)),
        );
        res.status(201);
        return created;
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/documents',
      access: { permission: 'knowledge.read' },
      summary: 'Documents of a source, newest first; filter by status',
      query: listQuery,
      success: { status: 200, description: 'A page of documents', schema: pageOf(knowledgeDocument) },
      refusals: { 404: sourceNotFound },
      handler: async (req, _res, { query }) => domains.knowledge.documents.list(sourceId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/documents/:document_id',
      access: { permission: 'knowledge.read' },
      summary: 'One document: status, vector_status, point counts and download fields',
      success: { status: 200, description: 'The document', schema: knowledgeDocument },
      refusals: documentNotFound,
      handler: async (req) => domains.knowledge.documents.get(sourceId(req.params), documentId(req.params)),
    }),
    route({
      method: 'del',
      path: '/knowledge-sources/:source_id/documents/:document_id',
      access: { permission: 'knowledge.write' },
      summary: 'Delete a document with its chunks, vectors and stored file',
      success: { status: 200, description: 'Deleted', schema: z.object({ status: z.literal('deleted'), document_id: z.string().uuid() }) },
      refusals: { ...documentNotFound, 409: 'Documents of a managed_correction source follow its corrections (MANAGED_SOURCE_READ_ONLY)' },
      handler: async (req, _res, { operation }) => domains.knowledge.documents.delete(sourceId(req.params), documentId(req.params), operation),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/documents/:document_id/download',
      access: { permission: 'knowledge.read' },
      summary: 'The original document through the host (same-origin proxy), with its original filename',
      success: { status: 200, description: 'The original bytes, as an attachment in the type they were uploaded with', contentType: '*/*' },
      refusals: documentNotFound,
      handler: async (req, res) => {
        const file = await domains.knowledge.documents.open(sourceId(req.params), documentId(req.params));
        return sendAttachment(res, file, log, { document_id: documentId(req.params) });
      },
    }),
  ];
};
