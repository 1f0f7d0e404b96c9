/**
 * The content types parsed on this machine. Kept apart from the parsers themselves: the host's thread only registers
 * them, and the parsers (pdf.js, mammoth, marked...) load in the parse workers alone.
 */
export const LOCAL_CONTENT_TYPES = [
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/html',
  'text/markdown',
  'text/x-markdown',
  'text/csv',
  'text/plain',
] as const;

/** The partition strategies of the Unstructured API (the client's `Strategy` values), for the plugin's configuration. */
export const UNSTRUCTURED_STRATEGIES = ['auto', 'fast', 'hi_res', 'ocr_only', 'od_only', 'vlm'] as const;
export type UnstructuredStrategyName = (typeof UNSTRUCTURED_STRATEGIES)[number];
