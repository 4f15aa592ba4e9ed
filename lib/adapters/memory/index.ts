export { MemoryStore } from './memory-store.js';
export { MemoryBlobStore } from './memory-blob-store.js';
export { MemoryStepQueue } from './memory-step-queue.js';
export { ManualClock, SequentialIds } from './manual-clock.js';
export { MemoryAdmission } from './memory-admission.js';
export { MemoryRunStream } from './memory-run-stream.js';
