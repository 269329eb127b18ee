// ESLint flat config for the extension (TypeScript via typescript-eslint).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['out/**', 'node_modules/**', 'extension/sample-project/**', 'test-artifacts/**', '.venv/**', '**/*.vsix'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['extension/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always'],
      curly: 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    files: ['extension/webview/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['extension/src/**/*.ts'],
    ignores: ['extension/src/extension.ts', 'extension/src/vscodeapi.ts', 'extension/src/client/daemon.ts', 'extension/src/chat/**', 'extension/src/edits/**', 'extension/src/commands/**'],
    rules: {
      // protocol.ts and settings.ts are shared with plain Node tests and the webview: no vscode.
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'This module must not depend on vscode.' }] }],
    },
  },
  {
    files: ['extension/src/chat/state.ts', 'extension/src/chat/store.ts', 'extension/src/chat/messages.ts', 'extension/src/edits/hunks.ts', 'extension/src/edits/patchState.ts', 'extension/src/client/python.ts', 'extension/src/client/backoff.ts', 'extension/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'Pure module: shared with the webview and unit tests.' }] }],
    },
  },
  {
    files: ['extension/test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
);
