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

/** A field a recognizer is asked to find. @beta */
export interface RecognitionField {
  key: string;
  label?: string;
  description?: string;
}

/** A field value a recognizer found. @beta */
export interface RecognizedField {
  key: string;
  value: string | null;
  confidence?: number;
  page?: number;
}

/**
 * Extracts named fields from a document, registered under a recognizer name.
 * @beta
 */
export interface DocumentRecognizer {
  recognize(input: DocumentInput, fields: RecognitionField[], options?: { signal?: AbortSignal }): Promise<{ fields: RecognizedField[]; summary?: string }>;
}
