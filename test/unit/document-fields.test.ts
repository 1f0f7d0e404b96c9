// The rules of document fields, without servers: which Fusion definitions can serve document recognition (and why
// not), how a document_field_set value is read (plain values, or {value, confidence, page}; the schema's order), how a
// review change applies, and how an extraction is scored against reviewed values field by field.
import { fusionDefinitionSchema } from '@agent-host/sdk';
import t from 'tap';
import { applyReview } from '../../core/src/document-recognition/field-reviews.js';
import { readFieldSet, runtimeSlots } from '../../core/src/document-recognition/field-set.js';
import type { FieldRow } from '../../core/src/document-recognition/run-store.js';
import { fieldScores } from '../../core/src/evaluation/field-score.js';

const definition = (schema: Record<string, unknown>, inputs: unknown[] = [{ name: 'document', kind: 'file' }]) =>
  fusionDefinitionSchema.parse({
    input_slots: inputs,
    output_slots: [{ name: 'fields', kind: 'structured_json', structured_output_profile: 'document_field_set', structured_output_schema: schema }],
  });

t.test('runtimeSlots: the upload slot, the field slot, and the fields in the order of required, then by name', async (t) => {
  const { slots, problems } = runtimeSlots(
    definition({
      type: 'object',
      required: ['total', 'number'],
      properties: { zeta: {}, number: { title: 'No.' }, alpha: { type: 'string' }, total: { type: 'number' } },
    }),
  );
  t.same(problems, []);
  t.equal(slots!.upload.name, 'document');
  t.same(
    slots!.fields.map((f) => [f.field_id, f.label, f.type]),
    [
      ['total', 'total', 'number'],
      ['number', 'No.', null],
      ['alpha', 'alpha', 'string'],
      ['zeta', 'zeta', null],
    ],
  );
  t.same(runtimeSlots(definition({ type: 'object', properties: {} })).problems, [
    'output slot "fields" has no fields: its schema needs properties, one per field',
  ]);
  t.same(
    runtimeSlots(
      definition({ type: 'object', properties: { a: {} } }, [
        { name: 'one', kind: 'file' },
        { name: 'two', kind: 'file', required: false },
        { name: 'note', kind: 'text', required: false },
      ]),
    ).problems,
    ['it has 2 file input slots; a runtime agent takes the upload in exactly one'],
    'an optional text input is allowed, a second file slot is not',
  );
});

t.test('readFieldSet: plain values, {value, confidence, page}, and missing fields', async (t) => {
  const { slots } = runtimeSlots(definition({ type: 'object', required: ['a', 'b', 'c', 'd'], properties: { a: {}, b: {}, c: {}, d: {} } }));
  const fields = readFieldSet(slots!.fields, {
    a: 'x',
    b: { value: 12, confidence: 0.4, page: 2 },
    c: { value: 'y', confidence: 7 },
    d: { value: 'z', other: 1 },
  });
  t.same(
    fields.map((f) => [f.field_id, f.extracted_value, f.confidence, f.page_number]),
    [
      ['a', 'x', null, null],
      ['b', 12, 0.4, 2],
      ['c', 'y', null, null],
      ['d', { value: 'z', other: 1 }, null, null],
    ],
    'a confidence outside 0..1 is dropped; an object with other keys is a value of its own',
  );
  t.same(
    readFieldSet(slots!.fields, 'not an object').map((f) => f.extracted_value),
    [null, null, null, null],
  );
});

t.test('applyReview: derived statuses, refused combinations, and changes that change nothing', async (t) => {
  const field = {
    extracted_value: 'Acme Ltd',
    current_value: 'Acme Ltd',
    current_review_status: 'unreviewed',
    current_reviewer_note: null,
  } as FieldRow;
  t.match(applyReview(field, { value: 'Acme GmbH' }), { review_status: 'corrected', changed: ['value', 'review_status'] });
  t.match(applyReview(field, { value: 'Acme Ltd' }), { review_status: 'accepted', changed: ['review_status'] });
  t.equal(applyReview({ ...field, current_review_status: 'accepted' } as FieldRow, { value: 'Acme Ltd' }), undefined, 'nothing changes');
  t.throws(() => applyReview(field, {}), /send a value, a review_status or a reviewer_note/);
  t.throws(() => applyReview(field, { review_status: 'corrected' }), /needs a value other than the extracted one/);
  t.throws(() => applyReview(field, { value: 'Other', review_status: 'accepted' }), /keeps the extracted value/);
  t.match(applyReview(field, { review_status: 'rejected', reviewer_note: 'unreadable' }), { value: 'Acme Ltd', changed: ['review_status', 'reviewer_note'] });
});

t.test('fieldScores: exact and normalised matches, amounts by value, in the schema order', async (t) => {
  const { fields, rule } = fieldScores(
    { total: '1,250.00 EUR', vendor: 'ACME  Ltd.', number: 'INV-7', date: '2026-12-31' },
    { total: 1250, vendor: 'Acme Ltd', number: 'INV-7', date: '2026-12-30' },
    ['number', 'vendor', 'total', 'date'],
  );
  t.same(
    fields.map((f) => [f.field_id, f.exact_match, f.normalized_match]),
    [
      ['number', true, true],
      ['vendor', false, true],
      ['total', false, true],
      ['date', false, false],
    ],
  );
  t.same(rule, { exact_match: 0.25, token_f1: 0.75, pass_rate: 0, matched_expected_answer_index: null });
  t.same(fieldScores({ a: 'x' }, { a: 'x' }, ['a']).rule.pass_rate, 1);
  t.same(fieldScores({ a: 'x' }, {}, ['a']).fields[0], { field_id: 'a', expected: 'x', predicted: null, exact_match: false, normalized_match: false });
});
