// The store contract on dynalite (the pure-Node fallback used by `npm start` without java).
import { admissionContract } from './admission.contract.js';
import { eventLogContract } from './event-log.contract.js';
import { inboxContract } from './inbox.contract.js';
import { runHeadsContract } from './run-heads.contract.js';
import { runStreamContract } from './run-stream.contract.js';
import { sweepIndexContract } from './sweep-index.contract.js';
import { dynamoStoreTarget, dynamoAdmissionTarget, dynamoRunStreamTarget } from './targets.js';

const target = dynamoStoreTarget('dynalite');
eventLogContract(target);
runHeadsContract(target);
sweepIndexContract(target);
inboxContract(target);
admissionContract(dynamoAdmissionTarget('dynalite'));
runStreamContract(dynamoRunStreamTarget('dynalite'));
