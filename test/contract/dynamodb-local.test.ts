// The store contract on DynamoDB Local (the official emulator; needs java, which .ci/run installs).
import { admissionContract } from './admission.contract.js';
import { eventLogContract } from './event-log.contract.js';
import { inboxContract } from './inbox.contract.js';
import { runHeadsContract } from './run-heads.contract.js';
import { runStreamContract } from './run-stream.contract.js';
import { sweepIndexContract } from './sweep-index.contract.js';
import { dynamoStoreTarget, dynamoAdmissionTarget, dynamoRunStreamTarget } from './targets.js';

const target = dynamoStoreTarget('dynamodb-local');
eventLogContract(target);
runHeadsContract(target);
sweepIndexContract(target);
inboxContract(target);
admissionContract(dynamoAdmissionTarget('dynamodb-local'));
runStreamContract(dynamoRunStreamTarget('dynamodb-local'));
