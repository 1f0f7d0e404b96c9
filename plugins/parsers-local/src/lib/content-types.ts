import type { DocumentParser } from '@agent-host/sdk';
import { LOCAL_CONTENT_TYPES } from './local-content-types.js';

/** What the Unstructured API parses by default when it is configured: the local types and the formats only it reads. */
export const UNSTRUCTURED_CONTENT_TYPES = [
  ...LOCAL_CONTENT_TYPES,
  'application/msword',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.ms-excel',
  'application/vnd.oasis.opendocument.text',
  'application/rtf',
  'application/epub+zip',
  'message/rfc822',
  'application/vnd.ms-outlook',
  'image/png',
  'image/jpeg',
  'image/tiff',
];

/**
 * The parser registered under each content type. Without an Unstructured URL
 * every local type gets its local parser (`local` gives it); with one, the
 * Unstructured parser takes each of `unstructured.contentTypes` (replacing the
 * local parser there, since a content type has one parser) and the local
 * parsers keep the rest.
 */
export function parserRegistrations(
  local: (contentType: string) => DocumentParser,
  unstructured?: { parser: DocumentParser; contentTypes: string[] },
): [string, DocumentParser][] {
  const localEntries = LOCAL_CONTENT_TYPES.map((type): [string, DocumentParser] => [type, local(type)]);
  if (!unstructured) return localEntries;
  const { parser } = unstructured;
  const routed = new Set(unstructured.contentTypes.map((type) => type.toLowerCase()));
  return [...localEntries.filter(([type]) => !routed.has(type)), ...[...routed].map((type): [string, DocumentParser] => [type, parser])];
}
