import { defineConfig } from 'vitest/config';

export default defineConfig({
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
