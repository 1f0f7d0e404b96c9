test('__KEY__ keeps every document parser rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest] });
  t.after(() => kernel.stop());
  const sample = {
    input: {
      data: new TextEncoder().encode('Parcels ship within two days.\n\nRefunds go to the original card.'),
      filename: 'policy.txt',
      contentType: '__KEY__',
    },
    contains: 'Parcels ship within two days',
  };
  for (const rule of documentParserConformance(kernel.get(extensionPoints.documentParsers, '__KEY__'), sample)) {
    await t.test(rule.rule, () => rule.check());
  }
});
