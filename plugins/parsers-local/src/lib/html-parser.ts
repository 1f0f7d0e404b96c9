import type { DocumentInput, DocumentParser, ParsedDocument, ParsedElement } from '@agent-host/sdk';
import { DomUtils, parseDocument } from 'htmlparser2';
import { decodeText, parsedDocument, squash } from './elements.js';
import { overLimit, type ParseLimits } from './parse-limits.js';

type Node = ReturnType<typeof parseDocument>['children'][number];

// Content that is never document text.
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'head', 'iframe', 'object']);
// Elements that end the paragraph before them and start a new one.
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'nav',
  'blockquote',
  'figure',
  'figcaption',
  'address',
  'dl',
  'dt',
  'dd',
  'hr',
  'form',
  'fieldset',
  'details',
  'summary',
  'center',
  'ul',
  'ol',
  'body',
]);
const LISTS = new Set(['ul', 'ol']);

/** The text of `node`, leaving out skipped content and the subtrees `exclude` names. */
function textOf(node: Node, exclude: ReadonlySet<string> = SKIPPED): string {
  if (DomUtils.isText(node)) return node.data;
  if (!DomUtils.isTag(node) || exclude.has(node.name)) return '';
  if (node.name === 'br') return ' ';
  return node.children.map((child) => textOf(child, exclude)).join('');
}

function tableText(table: Node): string {
  return DomUtils.getElementsByTagName('tr', table)
    .map((row) =>
      row.children
        .filter((cell) => DomUtils.isTag(cell) && (cell.name === 'td' || cell.name === 'th'))
        .map((cell) => squash(textOf(cell)))
        .join(' | '),
    )
    .filter((row) => row.replace(/[\s|]/g, '') !== '')
    .join('\n');
}

/**
 * Walks the DOM in document order: headings become Titles (`category_depth` =
 * level - 1), list items ListItems, tables one Table each (a line per row,
 * cells joined by ` | `), `pre` CodeSnippets, and the inline text between
 * block boundaries NarrativeText.
 */
class HtmlWalker {
  readonly elements: ParsedElement[] = [];
  private buffer = '';

  private push(type: string, text: string, metadata?: Record<string, unknown>): void {
    if (text) this.elements.push(metadata ? { type, text, metadata } : { type, text });
  }

  flush(): void {
    this.push('NarrativeText', squash(this.buffer));
    this.buffer = '';
  }

  visit(node: Node): void {
    if (DomUtils.isText(node)) {
      this.buffer += node.data;
      return;
    }
    if (!DomUtils.isTag(node) || SKIPPED.has(node.name)) return;
    const heading = /^h([1-6])$/.exec(node.name);
    if (heading) {
      this.flush();
      this.push('Title', squash(textOf(node)), { category_depth: Number(heading[1]) - 1 });
    } else if (node.name === 'li') {
      this.flush();
      this.push('ListItem', squash(textOf(node, new Set([...SKIPPED, ...LISTS]))));
      for (const child of node.children) if (DomUtils.isTag(child) && LISTS.has(child.name)) this.visit(child);
    } else if (node.name === 'table') {
      this.flush();
      this.push('Table', tableText(node));
    } else if (node.name === 'pre') {
      this.flush();
      this.push('CodeSnippet', textOf(node).replace(/^\n+|\s+$/g, ''));
    } else if (node.name === 'br') {
      this.buffer += '\n';
    } else if (BLOCKS.has(node.name)) {
      this.flush();
      for (const child of node.children) this.visit(child);
      this.flush();
    } else {
      for (const child of node.children) this.visit(child);
    }
  }
}

/** How deeply elements nest, found without recursion (the walk below recurses, so it runs only within the limit). */
function depthOf(root: { children: Node[] }): number {
  let deepest = 0;
  const stack: [Node, number][] = root.children.map((node) => [node, 1]);
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    if (DomUtils.hasChildren(node)) for (const child of node.children) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** The structural elements of an HTML document or fragment, and its `<title>`; deeper nesting than `maxDepth` is refused. */
export function htmlElements(html: string, filename: string, maxDepth: number): { elements: ParsedElement[]; title?: string } {
  const document = parseDocument(html);
  const depth = depthOf(document);
  if (depth > maxDepth) throw overLimit(filename, `its elements nest ${depth} deep (limit ${maxDepth})`, 'html_max_depth');
  const walker = new HtmlWalker();
  for (const node of document.children) walker.visit(node);
  walker.flush();
  const titleNode = DomUtils.findOne((el) => el.name === 'title', document.children);
  const title = titleNode ? squash(DomUtils.textContent(titleNode)) : '';
  return title ? { elements: walker.elements, title } : { elements: walker.elements };
}

/** `text/html`: headings, paragraphs, list items, tables and code blocks; scripts and styles are dropped. */
export class HtmlParser implements DocumentParser {
  constructor(private readonly limits: ParseLimits) {}

  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const { elements, title } = htmlElements(decodeText(input), input.filename, this.limits.htmlMaxDepth);
    return parsedDocument(elements, { parser: 'local-html', filename: input.filename, ...(title ? { title } : {}) });
  }
}
