import { createApiHandler } from 'logbook/lambda';
import agents from '../agents.js';

export const handler = createApiHandler({ agents });
