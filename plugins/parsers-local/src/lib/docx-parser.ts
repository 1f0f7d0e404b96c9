import { BadRequestError, type DocumentInput, type DocumentParser, type ParsedDocument } from '@agent-host/sdk';
import mammoth from 'mammoth';
import { parsedDocument } from './elements.js';
import { htmlElements } from './html-parser.js';

// Images carry no text; mammoth would otherwise inline each one as a data URI.
const dropImages = mammoth.images.imgElement(async () => ({ src: '' }));

/**
 * DOCX: mammoth maps Word's heading styles to `h1`..`h6`, lists and tables to
 * their HTML forms, and the HTML walker turns that into elements.
 */
export class DocxParser implements DocumentParser {
  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    let result: { value: string; messages: { type: string; message: string }[] };
    try {
      result = await mammoth.convertToHtml({ buffer: Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength) }, { convertImage: dropImages });
    } catch (error) {
      throw new BadRequestError(`${input.filename}: not a readable DOCX file (${(error as Error).message})`);
    }
    const warnings = result.messages.filter((m) => m.type === 'warning').map((m) => m.message);
    return parsedDocument(htmlElements(result.value).elements, {
      parser: 'local-docx',
      filename: input.filename,
      ...(warnings.length ? { warnings } : {}),
    });
  }
}
