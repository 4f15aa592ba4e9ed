import { defineConfig } from 'vitest/config';

// In this repository `logbook` resolves to its own TypeScript sources (package self-reference
// through "exports" with this condition); an installed package resolves to dist/.
const conditions = ['logbook-source', 'node', 'import', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts'],
    // Starts DynamoDB Local (when java is present), dynalite and fauxqs once per run on random
    // free ports; test files create uniquely named resources on them (test/setup/).
    globalSetup: ['test/setup/emulators.global.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
