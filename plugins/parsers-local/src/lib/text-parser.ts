import type { DocumentInput, DocumentParser, ParsedDocument } from '@agent-host/sdk';
import { decodeText, parsedDocument } from './elements.js';

/** `text/plain`: one NarrativeText per blank-line-separated paragraph, its line breaks kept. */
export class TextParser implements DocumentParser {
  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const paragraphs = decodeText(input)
      .split(/\r?\n\s*\r?\n/)
      .map((p) =>
        p
          .split(/\r?\n/)
          .map((line) => line.trimEnd())
          .join('\n')
          .trim(),
      );
    return parsedDocument(
      paragraphs.map((text) => ({ type: 'NarrativeText', text })),
      { parser: 'local-text', filename: input.filename },
    );
  }
}
