// The blob store and step queue contracts on fauxqs (S3 and SQS FIFO).
import { blobStoreContract } from './blob-store.contract.js';
import { stepQueueContract } from './step-queue.contract.js';
import { s3BlobTarget, sqsQueueTarget } from './targets.js';

blobStoreContract(s3BlobTarget);
stepQueueContract(sqsQueueTarget);
