import { createTriggerHandler } from 'logbook/lambda';
import agents from '../agents.js';

export const handler = createTriggerHandler({ agents });
