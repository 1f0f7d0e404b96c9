test('__KEY__ keeps every retriever rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest] });
  t.after(() => kernel.stop());
  for (const rule of retrieverConformance(kernel.get(extensionPoints.retrievers, '__KEY__'))) {
    await t.test(rule.rule, () => rule.check());
  }
});
