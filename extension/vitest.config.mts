// Three test projects: unit (no editor, `vscode` mocked), protocol (Node drives the real daemon
// over stdio), e2e (code-server in Chromium with the packaged .vsix).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  test: {
    root: here('..'),
    projects: [
      {
        test: {
          name: 'unit',
          include: ['extension/test/unit/**/*.test.ts'],
          environment: 'node',
          alias: { vscode: here('./test/unit/vscode.mock.ts') },
        },
      },
      {
        test: {
          name: 'protocol',
          include: ['extension/test/protocol/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['extension/test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 240_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          // One editor session runs the scenarios in order; a retry would start mid-story.
          retry: 0,
        },
      },
    ],
  },
});
