import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'out/', '.cache/', 'eslint.config.mjs', 'esbuild.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  // Over --stdio, anything on stdout corrupts the JSON-RPC stream; the CLI writes through process.stdout.
  { files: ['server/**/*.ts'], rules: { 'no-console': 'error' } },
  // A function a person can hold in their head: longer ones are split into named steps.
  { files: ['client/**/*.ts', 'server/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 80 }] } },
  // The layers of design.md §2. protocol/ declares what crosses a process and is the bottom every layer shares: it
  // imports nothing else of the project (its files sit in one folder, so any `../` leaves it).
  {
    files: ['server/src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./',
              message: 'server/src/protocol/ is the bottom layer: it imports only itself (design.md §2).',
            },
          ],
        },
      ],
    },
  },
  // The client renders what the server sends: it imports the protocol and the pure core, never the engine, the
  // language server's features or the CLI.
  {
    files: ['client/src/**/*.ts', 'client/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)server/src/(?!protocol/|dag/)',
              message: 'The client imports only server/src/protocol/ and server/src/dag/ (design.md §2).',
            },
          ],
        },
      ],
    },
  },
  // The two run drivers are siblings: what both do for a task is run/invokePolicy.ts; neither imports the other.
  {
    files: ['server/src/run/executor.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./durable/',
              message: 'The in-memory driver does not import the durable one: share it through run/invokePolicy.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['server/src/run/durable/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./executor$',
              message: 'The durable driver does not import the in-memory one: share it through run/invokePolicy.ts.',
            },
          ],
        },
      ],
    },
  },
);
