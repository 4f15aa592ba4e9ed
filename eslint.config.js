// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', 'dist/**', 'coverage/**', '.logbook/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': 'off',
    },
  },
  {
    // The core is pure: no I/O, no clock, no randomness, no AWS.
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['node:*', '@aws-sdk/*', '../engine/*', '../adapters/*', '../ports/*', '../models/*', 'fs', 'crypto'] },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'lib/core has no clock: take time as an argument.' },
        { object: 'Math', property: 'random', message: 'lib/core has no randomness.' },
      ],
      'no-restricted-globals': ['error', 'process', 'fetch', 'setTimeout', 'setInterval'],
    },
  },
  {
    // Only adapters, models, local stack and handlers talk to AWS.
    files: ['lib/engine/**/*.ts', 'lib/ports/**/*.ts', 'lib/testing/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['@aws-sdk/*'] }] },
  },
);
