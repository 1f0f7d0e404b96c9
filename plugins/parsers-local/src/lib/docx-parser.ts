import { BadRequestError, type DocumentInput, type DocumentParser, type ParsedDocument } from '@agent-host/sdk';
import mammoth from 'mammoth';
import { parsedDocument } from './elements.js';
import { htmlElements } from './html-parser.js';
import { overLimit, type ParseLimits } from './parse-limits.js';
import { zipRefusal } from './zip-limits.js';

// Images carry no text; mammoth would otherwise inline each one as a data URI.
const dropImages = mammoth.images.imgElement(async () => ({ src: '' }));

/**
 * DOCX: mammoth maps Word's heading styles to `h1`..`h6`, lists and tables to
 * their HTML forms, and the HTML walker turns that into elements.
 */
export class DocxParser implements DocumentParser {
  constructor(private readonly limits: ParseLimits) {}

  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const refusal = await zipRefusal(input.data, this.limits.zip);
    if (refusal?.key) throw overLimit(input.filename, refusal.reason, refusal.key);
    if (refusal) throw new BadRequestError(`${input.filename}: not a readable DOCX file (${refusal.reason})`, { code: 'DOCUMENT_UNREADABLE' });
    let result: { value: string; messages: { type: string; message: string }[] };
    try {
      result = await mammoth.convertToHtml(
        { buffer: Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength) },
        { convertImage: dropImages },
      );
    } catch (error) {
      throw new BadRequestError(`${input.filename}: not a readable DOCX file (${(error as Error).message})`, { code: 'DOCUMENT_UNREADABLE' });
    }
    const warnings = result.messages.filter((m) => m.type === 'warning').map((m) => m.message);
    return parsedDocument(htmlElements(result.value, input.filename, this.limits.htmlMaxDepth).elements, {
      parser: 'local-docx',
      filename: input.filename,
      ...(warnings.length ? { warnings } : {}),
    });
  }
}
