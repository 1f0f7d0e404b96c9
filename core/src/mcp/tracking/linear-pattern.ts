import { RE2JS } from 're2js';

/** Longest text a pattern or the identifier parser reads: enough for any chat message, bounded whatever the config. */
export const MATCHED_TEXT_LIMIT = 10_000;

export const matchedText = (text: string) => (text.length > MATCHED_TEXT_LIMIT ? text.slice(0, MATCHED_TEXT_LIMIT) : text);

/** A compiled pattern that only tests: what intent gates need of an administrator's regular expression. */
export interface LinearPattern {
  test(text: string): boolean;
}

const compiled = new Map<string, LinearPattern>();

/**
 * An administrator's pattern compiled with RE2JS, case-insensitive: matching takes time linear in the text, so no
 * pattern can stall the host on a crafted message (`^(a|a)*$` runs as fast as `^a*$`). Throws for what RE2 cannot
 * compile (backreferences, lookaround).
 */
export function linearPattern(source: string): LinearPattern {
  let pattern = compiled.get(source);
  if (!pattern) {
    const re = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);
    pattern = { test: (text) => re.matcher(matchedText(text)).find() };
    // Patterns come from agent configuration, so few; the bound only stops growth across many edits.
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(source, pattern);
  }
  return pattern;
}
