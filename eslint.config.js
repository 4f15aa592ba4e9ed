// @ts-check
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** The framework never imports an application, a handler entry or the dev kit. */
const FRAMEWORK_BOUNDARY = {
  group: ['**/examples/**', '**/dev/**', '**/functions/**', '**/handlers/**', 'logbook/local', '**/test/**', '**/bench/**'],
  message: 'lib/ is the framework: it never imports an application, a handler entry file, the dev kit or tests.',
};
/**
 * Adapters sit beside the engine, not under it: only the Lambda wiring, the CDK app, the testing kit
 * (and, outside lib/, the dev kit and tests) build them. Everything else goes through a port, and
 * shared helpers live in lib/support, shared numbers in lib/core/limits.ts.
 */
const NO_ADAPTERS = {
  group: ['**/adapters/**'],
  message: 'only lib/lambda, lib/cdk and lib/testing import adapters: go through a port (helpers are in lib/support, numbers in lib/core/limits.ts).',
};
/** Applications use Logbook the way a user does: through the package's entry points. */
const PUBLIC_ENTRY_POINTS = {
  group: ['**/lib/**', '**/dev/**', '!logbook/**'],
  message: "import Logbook by its package name: 'logbook', 'logbook/lambda', 'logbook/cdk', 'logbook/testing' or 'logbook/local'.",
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', 'dist/**', 'coverage/**', '.logbook/**', 'templates/**', '.scratch/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': 'off',
    },
  },
  {
    files: ['lib/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/extensions': ['.ts'], 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: {
      'no-restricted-imports': ['error', { patterns: [FRAMEWORK_BOUNDARY] }],
      // No import circle in the library (type-only imports included: they are how a circle starts).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // What agent authors write against never imports how the engine runs it.
    files: ['lib/authoring/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            FRAMEWORK_BOUNDARY,
            NO_ADAPTERS,
            {
              group: ['../engine/*', '../api/*', '../lambda/*', '../cdk/*', '../testing/*', '@aws-sdk/*'],
              message: 'lib/authoring is the authoring API: no engine run-time, no AWS.',
            },
          ],
        },
      ],
    },
  },
  {
    // Only adapters, models, the Lambda wiring and the CDK constructs talk to AWS.
    files: ['lib/engine/**/*.ts', 'lib/ports/**/*.ts', 'lib/support/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [FRAMEWORK_BOUNDARY, NO_ADAPTERS, { group: ['@aws-sdk/*'], message: 'no AWS SDK here: go through a port.' }] },
      ],
    },
  },
  {
    // The testing kit runs on the memory fakes, never on AWS.
    files: ['lib/testing/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [FRAMEWORK_BOUNDARY, { group: ['@aws-sdk/*'], message: 'no AWS SDK here: go through a port.' }] }],
    },
  },
  {
    // Models, the API and the MCP tools talk to their SDKs, but build no adapter.
    files: ['lib/models/**/*.ts', 'lib/api/**/*.ts', 'lib/tools/**/*.ts', 'lib/index.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [FRAMEWORK_BOUNDARY, NO_ADAPTERS] }] },
  },
  {
    // The core is pure: no I/O, no clock, no randomness, no AWS.
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            FRAMEWORK_BOUNDARY,
            NO_ADAPTERS,
            {
              group: ['node:*', '@aws-sdk/*', '../engine/*', '../adapters/*', '../ports/*', '../models/*', '../support/*', 'fs', 'crypto'],
              message: 'lib/core is pure.',
            },
          ],
        },
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
    // logbook/chat runs in browsers: nothing of Node, of the server side or of the AI SDK at run time.
    files: ['lib/chat/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            FRAMEWORK_BOUNDARY,
            { group: ['node:*', '@aws-sdk/*', '../*/*', 'ai', '@ai-sdk/*', 'hono', '@hono/*', 'zod'], message: 'lib/chat is browser code with no dependency: its own files only.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer'],
    },
  },
  {
    files: ['examples/**/*.ts', 'functions/**/*.ts', 'infra/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [PUBLIC_ENTRY_POINTS] }] },
  },
);
