import type { TestProject } from 'vitest/node';
import {
  javaAvailable,
  startDynalite,
  startDynamoDbLocal,
  startFauxqs,
  type RunningEmulator,
} from '../../dev/local/emulators.js';
import type { TestEmulators } from './emulator-context.js';

/**
 * vitest globalSetup: starts the emulators once for the whole run, on random free ports of
 * 127.0.0.1, and hands their endpoints to the test files (each creates its own uniquely named
 * table, bucket and queues). DynamoDB Local runs when `java` is present (CI installs it);
 * dynalite and fauxqs always run, in this process.
 *
 * LOGBOOK_TEST_EMULATORS=off skips them all (suites that need them are then skipped);
 * LOGBOOK_REQUIRE_DYNAMODB_LOCAL=1 (set by .ci/run) fails the run when java is missing.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const started: RunningEmulator[] = [];
  const provided: TestEmulators = { dynamodbLocal: null, dynalite: null, fauxqs: null, reason: '' };
  if (process.env.LOGBOOK_TEST_EMULATORS === 'off') {
    provided.reason = 'LOGBOOK_TEST_EMULATORS=off';
  } else {
    const java = javaAvailable();
    if (!java && process.env.LOGBOOK_REQUIRE_DYNAMODB_LOCAL === '1') {
      throw new Error('LOGBOOK_REQUIRE_DYNAMODB_LOCAL=1 but java is not installed (DynamoDB Local needs Java 17)');
    }
    if (!java) provided.reason = 'java is not installed: DynamoDB Local suites are skipped (.ci/run installs it)';
    const [ddbLocal, dynalite, fauxqs] = await Promise.all([
      java ? startDynamoDbLocal() : Promise.resolve(null),
      startDynalite(),
      startFauxqs(),
    ]);
    for (const e of [ddbLocal, dynalite, fauxqs]) if (e) started.push(e);
    provided.dynamodbLocal = ddbLocal?.endpoint ?? null;
    provided.dynalite = dynalite.endpoint;
    provided.fauxqs = fauxqs.endpoint;
  }
  project.provide('emulators', provided);
  return async () => {
    await Promise.allSettled(started.map((e) => e.stop()));
  };
}
