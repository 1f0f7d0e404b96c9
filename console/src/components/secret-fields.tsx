/** One secret of a credential: its name, shown, and its value, typed into a password field and never shown again. */
export interface SecretField {
  name: string;
  value: string;
}

/** Name and value rows for a credential's secret payload; values are write-only (the host returns only the names). */
export function SecretFields({ fields, onChange, idPrefix }: { fields: SecretField[]; onChange: (fields: SecretField[]) => void; idPrefix: string }) {
  const set = (index: number, change: Partial<SecretField>) => onChange(fields.map((f, i) => (i === index ? { ...f, ...change } : f)));
  return (
    <fieldset className="secrets">
      <legend>Secrets (write-only)</legend>
      {fields.map((field, i) => (
        <div key={i} className="toolbar">
          <label htmlFor={`${idPrefix}-name-${i}`}>Secret name</label>
          <input id={`${idPrefix}-name-${i}`} value={field.name} onChange={(e) => set(i, { name: e.target.value })} />
          <label htmlFor={`${idPrefix}-value-${i}`}>Value</label>
          <input id={`${idPrefix}-value-${i}`} type="password" autoComplete="off" value={field.value} onChange={(e) => set(i, { value: e.target.value })} />
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...fields, { name: '', value: '' }])}>
        Add a secret
      </button>
    </fieldset>
  );
}

/** The payload the host takes: the rows that have a name. */
export const secretPayload = (fields: SecretField[]) => Object.fromEntries(fields.filter((f) => f.name.trim()).map((f) => [f.name.trim(), f.value]));
