import { createTriggerHandler } from 'logbook/lambda';
import agents from '../src/agents.js';

export const handler = createTriggerHandler({ agents });
