import type { DocumentInput, DocumentParser, ParsedDocument, ParsedElement } from '@agent-host/sdk';
import { Lexer, type Token, type Tokens } from 'marked';
import { decodeText, parsedDocument, squash } from './elements.js';
import { htmlElements } from './html-parser.js';
import type { ParseLimits } from './parse-limits.js';

// YAML front matter would otherwise read as a paragraph under a setext heading.
const FRONT_MATTER = /^---\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)\r?\n/;

/** The plain text of inline tokens: markup dropped, link and image text kept. */
function inlineText(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => {
      if (token.type === 'br') return ' ';
      if (token.type === 'html' || token.type === 'checkbox') return '';
      if ('tokens' in token && token.tokens?.length) return inlineText(token.tokens);
      return 'text' in token && typeof token.text === 'string' ? token.text : '';
    })
    .join('');
}

/** Raw HTML blocks are parsed under the same nesting limit as HTML documents. */
interface HtmlBlocks {
  filename: string;
  maxDepth: number;
}

function blockElements(tokens: Token[], out: ParsedElement[], html: HtmlBlocks): void {
  for (const token of tokens) {
    switch (token.type) {
      case 'heading':
        out.push({ type: 'Title', text: squash(inlineText(token.tokens)), metadata: { category_depth: token.depth - 1 } });
        break;
      case 'paragraph':
      case 'text':
        out.push({ type: 'NarrativeText', text: squash(inlineText(token.tokens ?? [{ type: 'text', raw: token.raw, text: token.text }])) });
        break;
      case 'list':
        for (const item of (token as Tokens.List).items) {
          out.push({ type: 'ListItem', text: squash(inlineText(item.tokens.filter((t) => t.type !== 'list'))) });
          blockElements(
            item.tokens.filter((t) => t.type === 'list'),
            out,
            html,
          );
        }
        break;
      case 'code':
        out.push({ type: 'CodeSnippet', text: token.text, ...(token.lang ? { metadata: { language: token.lang } } : {}) });
        break;
      case 'table': {
        const table = token as Tokens.Table;
        const row = (cells: Tokens.TableCell[]) => cells.map((cell) => squash(inlineText(cell.tokens))).join(' | ');
        out.push({ type: 'Table', text: [row(table.header), ...table.rows.map(row)].join('\n') });
        break;
      }
      case 'blockquote':
        blockElements(token.tokens ?? [], out, html);
        break;
      case 'html':
        out.push(...htmlElements(token.text, html.filename, html.maxDepth).elements);
        break;
    }
  }
}

/** `text/markdown`: ATX and setext headings, paragraphs, list items, GFM tables, code blocks; front matter is skipped. */
export class MarkdownParser implements DocumentParser {
  constructor(private readonly limits: ParseLimits) {}

  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const source = decodeText(input).replace(FRONT_MATTER, '');
    const elements: ParsedElement[] = [];
    blockElements(Lexer.lex(source, { gfm: true }), elements, { filename: input.filename, maxDepth: this.limits.htmlMaxDepth });
    return parsedDocument(elements, { parser: 'local-markdown', filename: input.filename });
  }
}
