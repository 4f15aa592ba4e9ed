// The contract suites against the in-memory fakes: the reference the emulators are held to.
import { admissionContract } from './admission.contract.js';
import { blobStoreContract } from './blob-store.contract.js';
import { eventLogContract } from './event-log.contract.js';
import { inboxContract } from './inbox.contract.js';
import { runHeadsContract } from './run-heads.contract.js';
import { runStreamContract } from './run-stream.contract.js';
import { stepQueueContract } from './step-queue.contract.js';
import { sweepIndexContract } from './sweep-index.contract.js';
import { memoryBlobTarget, memoryQueueTarget, memoryStoreTarget, memoryAdmissionTarget, memoryRunStreamTarget } from './targets.js';

eventLogContract(memoryStoreTarget);
runHeadsContract(memoryStoreTarget);
sweepIndexContract(memoryStoreTarget);
inboxContract(memoryStoreTarget);
blobStoreContract(memoryBlobTarget);
stepQueueContract(memoryQueueTarget);
admissionContract(memoryAdmissionTarget);
runStreamContract(memoryRunStreamTarget);
