import { createApiHandler } from 'logbook/lambda';
import agents from '../examples/support-agent/agents.js';

export const handler = createApiHandler({ agents });
