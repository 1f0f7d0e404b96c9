/** JSON typed by the user, or why it is not JSON. */
export function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: `not valid JSON: ${(error as Error).message}` };
  }
}

/** A labelled textarea for JSON, with the reason it was not accepted beside it. */
export function JsonField({
  id,
  label,
  value,
  onChange,
  error,
  rows = 6,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (text: string) => void;
  error?: string;
  rows?: number;
}) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="code"
        rows={rows}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error}
        </span>
      )}
    </>
  );
}
