test('__KEY__ keeps every skill backend rule', async (t) => {
  const kernel = await startTestKernel({ plugins: [plugin], manifests: [manifest] });
  t.after(() => kernel.stop());
  const sample = { config: { template: 'You said: {text}' }, invalidConfig: { template: 7 }, input: { text: 'hello' } };
  for (const rule of skillBackendConformance(kernel.get(extensionPoints.skillBackends, '__KEY__'), sample)) {
    await t.test(rule.rule, () => rule.check());
  }
});
