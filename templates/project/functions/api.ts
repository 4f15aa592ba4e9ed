import { createApiHandler } from 'logbook/lambda';
import agents from '../src/agents.js';

export const handler = createApiHandler({ agents });
