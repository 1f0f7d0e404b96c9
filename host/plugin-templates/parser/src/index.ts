import { definePlugin, extensionPoints, type DocumentInput, type DocumentParser, type ParsedDocument } from '@agent-host/sdk';

/** The content type this parser reads; uploads of this type reach it. Replace it with your format's. */
export const CONTENT_TYPE = '__KEY__';

/**
 * Turns a document's bytes into text and structural elements. This one reads UTF-8 text with a blank line between
 * paragraphs; replace `parse` with your format's reader.
 */
class __CLASS__ implements DocumentParser {
  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const text = new TextDecoder().decode(input.data);
    const paragraphs = text
      .split(/\n\s*\n/)
      .map((part) => part.trim())
      .filter(Boolean);
    return {
      text,
      elements: paragraphs.map((paragraph) => ({ type: 'paragraph', text: paragraph })),
      metadata: { filename: input.filename, paragraphs: paragraphs.length },
    };
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  register(env) {
    env.registerInit({
      deps: { documentParsers: extensionPoints.documentParsers },
      async init({ documentParsers }) {
        documentParsers.register(CONTENT_TYPE, new __CLASS__());
      },
    });
  },
});
