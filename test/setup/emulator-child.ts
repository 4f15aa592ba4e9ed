// A process that starts the emulators and prints their endpoints, for the test that kills it and
// checks that DynamoDB Local dies with it. Usage: tsx emulator-child.ts <auto|dynamodb-local|dynalite>
import { startEmulators, type DynamoEngine } from '../../dev/local/emulators.js';

const choice = (process.argv[2] ?? 'auto') as 'auto' | DynamoEngine;
const emulators = await startEmulators({ dynamo: choice });
process.stdout.write(`${JSON.stringify({ dynamo: emulators.dynamo, endpoints: emulators.endpoints, pid: process.pid })}\n`);
setInterval(() => undefined, 60_000);
