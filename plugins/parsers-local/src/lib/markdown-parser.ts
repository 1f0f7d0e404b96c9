import type { DocumentInput, DocumentParser, ParsedDocument, ParsedElement } from '@agent-host/sdk';
import { Lexer, type Token, type Tokens } from 'marked';
import { decodeText, parsedDocument, squash } from './elements.js';
import { htmlElements } from './html-parser.js';

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

function blockElements(tokens: Token[], out: ParsedElement[]): void {
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
          blockElements(item.tokens.filter((t) => t.type === 'list'), out);
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
        blockElements(token.tokens ?? [], out);
        break;
      case 'html':
        out.push(...htmlElements(token.text).elements);
        break;
    }
  }
}

/** `text/markdown`: ATX and setext headings, paragraphs, list items, GFM tables, code blocks; front matter is skipped. */
export class MarkdownParser implements DocumentParser {
  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const source = decodeText(input).replace(FRONT_MATTER, '');
    const elements: ParsedElement[] = [];
    blockElements(Lexer.lex(source, { gfm: true }), elements);
    return parsedDocument(elements, { parser: 'local-markdown', filename: input.filename });
  }
}
