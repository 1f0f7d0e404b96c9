/**
 * `attachment` named after the key's last segment (where the host keeps the
 * original filename), in ASCII and in RFC 5987 form. Stored with each object
 * so a download straight from the bucket (a presigned URL) is saved and an
 * uploaded HTML or SVG file is never rendered from the bucket's origin.
 */
export function attachmentForKey(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
