// The import rules of ARCHITECTURE.md section 1 (plugins -> sdk <- core <- host), checked by dependency-cruiser in
// `npm test` (`npm run depcheck`): a violation names the rule, the importing module and the imported one.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A module must not import itself back through others: cycles make load order and refactoring fragile.',
      severity: 'error',
      from: { path: '^(sdk|core|host|plugins/[^/]+)/src/' },
      to: { circular: true },
    },
    {
      name: 'sdk-stands-alone',
      comment: 'The SDK is the published plugin contract: it depends on no part of the host.',
      severity: 'error',
      from: { path: '^sdk/' },
      to: { path: '^(core|host|plugins|client)/' },
    },
    {
      name: 'plugins-import-only-the-sdk',
      comment: 'A plugin reaches the host only through @agent-host/sdk, never core, host or another plugin.',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/src/' },
      to: { path: '^(core|host|client|test)/|^plugins/', pathNot: '^plugins/$1/' },
    },
    {
      name: 'only-a-plugin-imports-its-sources',
      comment: "Outside a plugin's own folder, a plugin is used through its package entry (as the host loads it), never a module inside it.",
      severity: 'error',
      from: { pathNot: '^plugins/' },
      to: { path: '^plugins/[^/]+/src/' },
    },
    {
      name: 'plugin-tests-use-other-plugins-through-their-entry',
      comment: "A plugin's tests may read its own sources; another plugin they reach through its package entry.",
      severity: 'error',
      from: { path: '^plugins/([^/]+)/test/' },
      to: { path: '^plugins/', pathNot: ['^plugins/$1/', '^plugins/[^/]+/dist/index\\.(js|d\\.ts)$'] },
    },
    {
      name: 'core-knows-no-host-or-plugin',
      comment: 'Core is below the host and names no plugin: plugins are found through extension points.',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(host|plugins|client)/' },
    },
    {
      name: 'host-imports-core-through-its-entry',
      comment: 'The host uses core only through @agent-host/core (core/src/index.ts), never a module inside it.',
      severity: 'error',
      from: { path: '^host/' },
      to: { path: '^core/', pathNot: '^core/(src|dist)/index\\.(ts|js|d\\.ts)$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
  },
};
