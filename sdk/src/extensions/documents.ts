/** A document handed to a parser or recognizer. @public */
export interface DocumentInput {
  data: Uint8Array;
  filename: string;
  contentType: string;
}

/** One structural element of a parsed document (title, paragraph, table...). @public */
export interface ParsedElement {
  type: string;
  text: string;
  metadata?: Record<string, unknown>;
}

/** A parse snapshot. @public */
export interface ParsedDocument {
  text: string;
  elements: ParsedElement[];
  metadata: Record<string, unknown>;
}

/**
 * Extracts text from one or more content types; registered once per content
 * type it handles (for example `application/pdf`).
 * @public
 */
export interface DocumentParser {
  parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument>;
}

/** What the host gives a recognizer for one document. @public */
export interface RecognitionContext {
  /** Parses with the host's document parsers (local, or the Unstructured API when configured) by content type; rejects when none reads it. */
  parse(input: DocumentInput): Promise<ParsedDocument>;
  /** How many pages to render as previews, how wide (pixels), and the most pages a document may have. */
  limits: { preview_pages: number; preview_width_px: number; max_pages: number };
  signal: AbortSignal;
}

/** The text of one page (1-based), as read from the document's layout. @public */
export interface RecognitionPage {
  page_number: number;
  text: string;
}

/** A PNG image of one page. @public */
export interface PreviewImage {
  page_number: number;
  width: number;
  height: number;
  png: Uint8Array;
}

/**
 * A document made ready for extraction and review: its text (what the model reads, with page marks), its layout
 * (parsed elements and per-page text), a PDF rendition for reviewers, and PNG previews of its first pages.
 * @public
 */
export interface PreparedDocument {
  text: string;
  pages: RecognitionPage[];
  elements: ParsedElement[];
  page_count: number;
  /**
   * The PDF reviewers open: `original` (the upload is a PDF), `image` (the image on a page of its size), `text_layout`
   * (the parsed text set on pages, for formats without pages such as DOCX), or null when none could be made.
   */
  pdf: { data: Uint8Array; rendition: 'original' | 'image' | 'text_layout' } | null;
  previews: PreviewImage[];
  /** What a reviewer should know (no text layer, pages left out, a rendition that lost the layout). */
  warnings: string[];
}

/** A field value to locate in a prepared document. @public */
export interface FieldValue {
  field_id: string;
  value: string;
}

/** Where a field's value was found: its page (null when not found), and what matched. @public */
export interface FieldLocation {
  field_id: string;
  page_number: number | null;
  matched_text: string | null;
}

/**
 * Turns an uploaded document into what a document-recognition run needs (spec 4.10), registered under a recognizer
 * key: `prepare` reads text and layout (through `context.parse`), makes the PDF rendition and page previews within
 * the host's limits; `locate` finds on which page each extracted field value appears. The fields themselves come
 * from the runtime agent's Fusion definition. `documentRecognizerConformance` in `@agent-host/sdk/testing` states the rules.
 * @public
 */
export interface DocumentRecognizer {
  /** The content types it prepares (`image/*` matches every image). */
  readonly contentTypes: readonly string[];
  prepare(input: DocumentInput, context: RecognitionContext): Promise<PreparedDocument>;
  locate(values: FieldValue[], document: PreparedDocument): FieldLocation[];
}
