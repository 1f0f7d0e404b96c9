/** A rule score of one answer against its accepted answers (spec 2.9). */
export interface RuleScore {
  exact_match: number;
  token_f1: number;
  /** 1 when the answer matches exactly or reaches the F1 threshold, else 0; a run's pass rate is their mean. */
  pass_rate: number;
  /** The accepted answer that scored best (0 for the first, in CSV column order); null when none shares a token. */
  matched_expected_answer_index: number | null;
}

const ARTICLES = /\b(a|an|the)\b/g;
// Letters and digits of any script; a CJK character is a token of its own, since those scripts put no spaces.
const TOKEN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[^\s\p{P}\p{S}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;

/**
 * SQuAD's normalisation: lower case, punctuation and symbols removed, English articles removed, whitespace collapsed.
 * Other languages keep their words (only English articles are dropped); CJK text is compared character by character.
 */
export function normalizeAnswer(text: string): string[] {
  return (text.normalize('NFKC').toLowerCase().replace(ARTICLES, ' ').match(TOKEN) ?? []).filter((token) => token.length > 0);
}

function f1(predicted: string[], expected: string[]): number {
  if (predicted.length === 0 || expected.length === 0) return predicted.length === expected.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of expected) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common += 1;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / predicted.length;
  const recall = common / expected.length;
  return (2 * precision * recall) / (precision + recall);
}

/** The best exact match and token F1 over the accepted answers. */
export function ruleScore(predicted: string, expected: readonly string[], passF1: number): RuleScore {
  const answer = normalizeAnswer(predicted);
  let best = { index: null as number | null, f1: 0, exact: 0 };
  expected.forEach((candidate, index) => {
    const tokens = normalizeAnswer(candidate);
    const exact = tokens.join(' ') === answer.join(' ') ? 1 : 0;
    const score = f1(answer, tokens);
    if (exact > best.exact || (exact === best.exact && score > best.f1)) best = { index, f1: score, exact };
  });
  const tokenF1 = Math.round(best.f1 * 10_000) / 10_000;
  return {
    exact_match: best.exact,
    token_f1: tokenF1,
    pass_rate: best.exact === 1 || tokenF1 >= passF1 ? 1 : 0,
    matched_expected_answer_index: best.exact === 1 || best.f1 > 0 ? best.index : null,
  };
}
