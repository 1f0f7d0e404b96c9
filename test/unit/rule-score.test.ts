// Rule scores of evaluation results (core/src/evaluation/rule-score.ts): SQuAD normalisation, the best of several
// accepted answers, and text in other scripts.
import t from 'tap';
import { normalizeAnswer, ruleScore } from '../../core/src/evaluation/rule-score.js';

t.test('normalisation: case, punctuation, English articles, whitespace; other scripts', async (t) => {
  t.same(normalizeAnswer('  The 30-day  window, an Option! '), ['30', 'day', 'window', 'option']);
  t.same(normalizeAnswer('Zurückgabe innerhalb von 30 Tagen.'), ['zurückgabe', 'innerhalb', 'von', '30', 'tagen']);
  t.same(normalizeAnswer('退货期限三十天'), ['退', '货', '期', '限', '三', '十', '天']);
});

t.test('the best accepted answer decides, and says which it was', async (t) => {
  t.same(ruleScore('Thirty days.', ['30 days', 'thirty days'], 0.8), { exact_match: 1, token_f1: 1, pass_rate: 1, matched_expected_answer_index: 1 });
  t.same(ruleScore('Returns take 30 days', ['30 days'], 0.8), { exact_match: 0, token_f1: 0.6667, pass_rate: 0, matched_expected_answer_index: 0 });
  t.same(ruleScore('Returns take 30 days', ['30 days'], 0.6), { exact_match: 0, token_f1: 0.6667, pass_rate: 1, matched_expected_answer_index: 0 });
  t.same(ruleScore('No idea', ['30 days'], 0.8), { exact_match: 0, token_f1: 0, pass_rate: 0, matched_expected_answer_index: null });
  t.same(ruleScore('', ['30 days'], 0.8).token_f1, 0, 'an empty answer scores nothing');
  t.same(ruleScore('退货期限三十天', ['三十天'], 0.5).pass_rate, 1, 'CJK answers overlap character by character');
});
