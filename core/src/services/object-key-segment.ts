/** An object key segment from an uploaded file name: no separators, control characters or dot segments, at most 200 characters. */
export function objectKeySegment(filename: string, fallback: string): string {
  const cleaned = filename.replace(/[/\\\u0000-\u001f\u007f]/g, '_').slice(-200);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? fallback : cleaned;
}
