import { BadRequestError, type DocumentInput, type ParsedDocument, type ParsedElement } from '@agent-host/sdk';

// Element types follow Unstructured's vocabulary (Title, NarrativeText,
// ListItem, Table, CodeSnippet), so chunkers treat local and Unstructured
// parses alike; TableRow (one CSV record) is ours.

/** Collapses runs of whitespace (line breaks included) to one space. */
export const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Adds `headings` (the trail of enclosing titles, outermost first) to every
 * element, from each Title's `category_depth` (0 = top level, as Unstructured
 * reports it). A Title's own trail holds its parents only.
 */
function withHeadingTrail(elements: ParsedElement[]): ParsedElement[] {
  const trail: { depth: number; text: string }[] = [];
  return elements.map((element) => {
    if (element.type !== 'Title') return { ...element, metadata: { ...element.metadata, headings: trail.map((h) => h.text) } };
    const depth = typeof element.metadata?.category_depth === 'number' ? element.metadata.category_depth : 0;
    while (trail.length && trail.at(-1)!.depth >= depth) trail.pop();
    const parents = trail.map((h) => h.text);
    trail.push({ depth, text: element.text });
    return { ...element, metadata: { ...element.metadata, headings: parents } };
  });
}

/** A parse snapshot: the elements (empty ones dropped, heading trails added) and their text joined by blank lines. */
export function parsedDocument(elements: ParsedElement[], metadata: Record<string, unknown>): ParsedDocument {
  const kept = withHeadingTrail(elements.filter((e) => e.text.trim() !== ''));
  return { text: kept.map((e) => e.text).join('\n\n'), elements: kept, metadata: { ...metadata, element_count: kept.length } };
}

/** Decodes text bytes with the `charset` of the content type (default UTF-8), dropping a byte-order mark. */
export function decodeText(input: DocumentInput): string {
  const charset = /;\s*charset="?([^";\s]+)"?/i.exec(input.contentType)?.[1] ?? 'utf-8';
  let decoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    throw new BadRequestError(`${input.filename}: unknown charset "${charset}"`, { code: 'DOCUMENT_UNREADABLE' });
  }
  return decoder.decode(input.data);
}
