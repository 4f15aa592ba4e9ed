import { createWorkerHandler } from 'logbook/lambda';
import agents from '../src/agents.js';

export const handler = createWorkerHandler({ agents });
