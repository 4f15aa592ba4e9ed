import { createWorkerHandler } from 'logbook/lambda';
import agents from '../agents.js';

export const handler = createWorkerHandler({ agents });
