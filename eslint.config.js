// ESLint over the TypeScript sources, with type information (typescript-eslint's project service reads each
// package's tsconfig). `npm test` runs it before the tests (`node scripts/lint.mjs`); a finding fails the run.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'client/src/generated/**', '**/*.d.ts'],
  },
  {
    files: ['sdk/src/**/*.ts', 'core/src/**/*.ts', 'host/src/**/*.ts', 'plugins/*/src/**/*.ts', 'migrations/*.ts', 'console/src/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits loses its error: it becomes an unhandled rejection, which ends the host.
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise where a boolean or a void callback is expected is always truthy, or its rejection is lost.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // `import { type X }` still loads the module at run time; `import type { X }` does not.
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'smart'],
      // Validation matches NUL and other control characters on purpose, to refuse them.
      'no-control-regex': 'off',
    },
  },
  {
    // The console's hooks must run in the same order on every render: a hook behind a condition or `&&` breaks React.
    files: ['console/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
);
