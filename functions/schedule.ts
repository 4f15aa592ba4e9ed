import { createScheduleHandler } from 'logbook/lambda';
import agents from '../examples/support-agent/agents.js';

/** EventBridge Scheduler target: one firing of a schedule of the agents or workflows. */
export const handler = createScheduleHandler({ agents });
