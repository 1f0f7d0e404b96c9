import type { DocumentInput, DocumentParser } from '../extensions/documents.js';
import { abortedSignal, conformanceRule, rejectionOf, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'document parser';

/** A document of the parser's content type and a phrase its text must contain. */
export interface ParserSample {
  input: DocumentInput;
  contains: string;
}

/**
 * What every {@link DocumentParser} must do with a document of its content type: give its text (containing the
 * sample's phrase), structural elements that each have a type and text, and metadata, the same for the same bytes;
 * and refuse to work for an aborted caller.
 * @public
 */
export function documentParserConformance(parser: DocumentParser, sample: ParserSample): ConformanceRule[] {
  const named = `${sample.input.contentType} (${sample.input.filename})`;
  return [
    conformanceRule(SUITE, 'parse() gives the text, typed elements and metadata of a document', async (fail: Fail) => {
      const parsed = await parser.parse(sample.input);
      if (typeof parsed.text !== 'string') fail(`${named}: text is ${typeof parsed.text}`);
      if (!parsed.text.includes(sample.contains))
        fail(`${named}: the text does not contain ${JSON.stringify(sample.contains)}: ${JSON.stringify(parsed.text.slice(0, 120))}`);
      if (!Array.isArray(parsed.elements) || parsed.elements.length === 0) fail(`${named}: no elements`);
      parsed.elements.forEach((element, i) => {
        if (typeof element.type !== 'string' || element.type === '' || typeof element.text !== 'string')
          fail(`${named}: element ${i} is ${JSON.stringify(element).slice(0, 120)}, not {type, text}`);
      });
      if (!parsed.elements.some((element) => element.text.includes(sample.contains))) fail(`${named}: no element holds ${JSON.stringify(sample.contains)}`);
      if (typeof parsed.metadata !== 'object' || parsed.metadata === null || Array.isArray(parsed.metadata))
        fail(`${named}: metadata is ${JSON.stringify(parsed.metadata)}, not an object`);
    }),
    conformanceRule(SUITE, 'the same bytes give the same text', async (fail: Fail) => {
      const [first, second] = [await parser.parse(sample.input), await parser.parse({ ...sample.input, data: sample.input.data.slice() })];
      if (first.text !== second.text) fail(`${named}: two parses of the same document differ`);
    }),
    conformanceRule(SUITE, 'parse() with an aborted signal rejects', async (fail: Fail) => {
      const error = await rejectionOf(parser.parse(sample.input, { signal: abortedSignal() }));
      if (error === undefined) fail(`${named}: it resolved: a cancelled ingestion still had its document parsed`);
    }),
  ];
}
