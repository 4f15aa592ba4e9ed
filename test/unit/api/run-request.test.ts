import { describe, expect, it } from 'vitest';
import { RunRequestSchema } from '../../../lib/api/run-request.js';
import { StartRunBodySchema } from '../../../lib/api/schemas.js';
import { runRequestedDetailSchema } from '../../../lib/lambda/trigger-handler.js';

const request = { agent: 'support', version: '1.0.0', input: { order: 'o_1' }, budgets: { maxSteps: 5, deadlineSeconds: 600 } };

describe('one schema starts a run, from the API and from EventBridge', () => {
  it('the trigger detail is the shared run request, and the API body is it plus runId', () => {
    expect(runRequestedDetailSchema).toBe(RunRequestSchema);
    expect(Object.keys(StartRunBodySchema.shape).sort()).toEqual([...Object.keys(RunRequestSchema.shape), 'runId'].sort());
  });

  it('both accept the same request and refuse the same mistakes', () => {
    for (const schema of [runRequestedDetailSchema, StartRunBodySchema]) {
      expect(schema.safeParse(request).success).toBe(true);
      expect(schema.safeParse({ ...request, tenant: 'someone-else' }).success).toBe(false);
      expect(schema.safeParse({ ...request, budgets: { maxSteps: 0 } }).success).toBe(false);
      expect(schema.safeParse({ ...request, budgets: { maxTurns: 3 } }).success).toBe(false);
      expect(schema.safeParse({ ...request, input: '' }).success).toBe(false);
    }
  });

  it('only the API takes a client-chosen run id: an event run id derives from the event id', () => {
    expect(StartRunBodySchema.safeParse({ ...request, runId: 'order-1' }).success).toBe(true);
    expect(StartRunBodySchema.safeParse({ ...request, runId: 'bad id' }).success).toBe(false);
    expect(runRequestedDetailSchema.safeParse({ ...request, runId: 'order-1' }).success).toBe(false);
  });
});
