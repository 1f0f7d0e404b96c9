import { validate, ValidationError, type ParsedDocument, type ParsedElement } from '@agent-host/sdk';
import { z } from 'zod';

const sizes = z
  .object({
    chunk_size: z.number().int().min(50).max(20_000).default(1000),
    chunk_overlap: z.number().int().min(0).max(5000).default(150),
  })
  .strict()
  .refine((p) => p.chunk_overlap < p.chunk_size, { message: 'chunk_overlap must be smaller than chunk_size', path: ['chunk_overlap'] });

const byTitle = z
  .object({
    max_characters: z.number().int().min(50).max(20_000).default(1500),
    overlap: z.number().int().min(0).max(5000).default(0),
    combine_under_characters: z.number().int().min(0).max(20_000).default(300),
  })
  .strict()
  .refine((p) => p.overlap < p.max_characters, { message: 'overlap must be smaller than max_characters', path: ['overlap'] });

/**
 * The named chunking strategies and their parameters:
 * - `recursive_character`: LangChain's recursive splitter over the snapshot text;
 * - `markdown`: LangChain's Markdown splitter over the elements written as Markdown (titles as headings);
 * - `by_title`: element-based, a new chunk at each Title, small sections combined, long ones split.
 */
export const CHUNKING_STRATEGIES = { recursive_character: sizes, markdown: sizes, by_title: byTitle } as const;

export type ChunkingStrategy = keyof typeof CHUNKING_STRATEGIES;
export const DEFAULT_CHUNKING: Chunking = { strategy: 'recursive_character', params: { chunk_size: 1000, chunk_overlap: 150 } };

export interface Chunking {
  strategy: ChunkingStrategy;
  params: Record<string, number>;
}

/** A chunk; metadata values are scalars, as vector stores keep them. */
export interface Chunk {
  content: string;
  metadata: Record<string, string | number | null>;
}

/** Validates a strategy name and its parameters (defaults filled in); 422 with `loc` under `at`. */
export function parseChunking(strategy: string, params: unknown, at: { strategy: (string | number)[]; params: (string | number)[] }): Chunking {
  if (!(strategy in CHUNKING_STRATEGIES)) {
    throw new ValidationError([
      { loc: at.strategy, msg: `unknown chunking strategy "${strategy}"; known: ${Object.keys(CHUNKING_STRATEGIES).join(', ')}`, type: 'value_error' },
    ]);
  }
  return { strategy: strategy as ChunkingStrategy, params: validate(CHUNKING_STRATEGIES[strategy as ChunkingStrategy], params ?? {}, at.params) };
}

/** Splits a parse snapshot into chunks with the given strategy; empty chunks are dropped. */
/**
 * LangChain's splitters, loaded with the first document chunked: they bring @langchain/core (some 250 modules) that a
 * host which never ingests, and every process that imports core for something else, should not load.
 */
const splitters = () => import('@langchain/textsplitters');

export async function chunkDocument(doc: ParsedDocument, chunking: Chunking): Promise<Chunk[]> {
  const { strategy, params } = chunking;
  const { MarkdownTextSplitter, RecursiveCharacterTextSplitter } = await splitters();
  let chunks: Chunk[];
  if (strategy === 'by_title') chunks = await chunkByTitle(doc.elements, params);
  else {
    const options = { chunkSize: params.chunk_size!, chunkOverlap: params.chunk_overlap! };
    const texts =
      strategy === 'markdown'
        ? await new MarkdownTextSplitter(options).splitText(asMarkdown(doc.elements))
        : await new RecursiveCharacterTextSplitter(options).splitText(doc.text);
    chunks = texts.map((content) => ({ content, metadata: {} }));
  }
  return chunks.filter((c) => c.content.trim() !== '');
}

function asMarkdown(elements: ParsedElement[]): string {
  return elements
    .map((e) => {
      if (e.type === 'Title') return `${'#'.repeat(Math.min(6, depthOf(e) + 1))} ${e.text}`;
      if (e.type === 'ListItem') return `- ${e.text}`;
      return e.text;
    })
    .join('\n\n');
}

const depthOf = (e: ParsedElement) => (typeof e.metadata?.category_depth === 'number' ? e.metadata.category_depth : 0);
const headingsOf = (e: ParsedElement) => (Array.isArray(e.metadata?.headings) ? (e.metadata.headings as string[]) : []);
const pageOf = (e: ParsedElement) => (typeof e.metadata?.page_number === 'number' ? e.metadata.page_number : null);

interface Section {
  /** The section's title, repeated at the head of each part when the section is split. */
  title: string | null;
  headings: string[];
  page: number | null;
  texts: string[];
}

const joined = (section: Section) => [...(section.title === null ? [] : [section.title]), ...section.texts].join('\n\n');

/** Unstructured's chunk-by-title idea over the parser's elements. */
async function chunkByTitle(elements: ParsedElement[], params: Record<string, number>): Promise<Chunk[]> {
  const sections: Section[] = [];
  for (const element of elements) {
    const current = sections.at(-1);
    if (element.type === 'Title') sections.push({ title: element.text, headings: [...headingsOf(element), element.text], page: pageOf(element), texts: [] });
    else if (!current) sections.push({ title: null, headings: headingsOf(element), page: pageOf(element), texts: [element.text] });
    else {
      current.texts.push(element.text);
      current.page ??= pageOf(element);
    }
  }
  // A section shorter than combine_under_characters joins the next one, keeping its own headings.
  const combined: Section[] = [];
  for (const section of sections) {
    const previous = combined.at(-1);
    const previousLength = previous ? joined(previous).length : Infinity;
    if (previous && previousLength < params.combine_under_characters! && previousLength + joined(section).length + 2 <= params.max_characters!) {
      previous.texts.push(joined(section));
    } else combined.push({ ...section, texts: [...section.texts] });
  }
  const chunks: Chunk[] = [];
  for (const section of combined) {
    const metadata = { headings: section.headings.join(' > ') || null, page_number: section.page };
    const text = joined(section);
    if (text.length <= params.max_characters!) {
      chunks.push({ content: text, metadata });
      continue;
    }
    // Each part of a long section keeps its title, so no part loses what it is about.
    const head = section.title === null ? '' : `${section.title}\n\n`;
    const size = Math.max(params.max_characters! - head.length, params.overlap! + 1);
    const { RecursiveCharacterTextSplitter } = await splitters();
    const parts = await new RecursiveCharacterTextSplitter({ chunkSize: size, chunkOverlap: params.overlap! }).splitText(section.texts.join('\n\n'));
    for (const part of parts) chunks.push({ content: head + part, metadata });
  }
  return chunks;
}
