import { z } from '@hono/zod-openapi';

/**
 * Schemas of the workflow routes: the registered workflows (GET /workflows) and a workflow run's
 * operations (GET /runs/{id}/operations), as the run's fold state holds them.
 */

const definitionVersion = z.object({
  version: z.string(),
  input: z
    .object({
      jsonSchema: z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema (draft 2020-12) of `input`' }),
      sha256: z.string().openapi({ description: 'as pinned in run_started.inputSchema' }),
    })
    .nullable()
    .openapi({ description: 'null: the workflow takes any non-empty text, JSON object or array' }),
  output: z
    .object({ jsonSchema: z.record(z.string(), z.unknown()), sha256: z.string() })
    .nullable()
    .openapi({ description: "JSON Schema of what the workflow returns (the run's `output`); null: any JSON" }),
  description: z.string().optional(),
});

export const WorkflowViewSchema = z
  .object({
    workflow: z.string(),
    latest: z.string().openapi({ description: 'the version a run gets when it names none' }),
    versions: z.array(definitionVersion),
  })
  .openapi('Workflow');
export type WorkflowView = z.infer<typeof WorkflowViewSchema>;

export const WorkflowListSchema = z.object({ workflows: z.array(WorkflowViewSchema) }).openapi('WorkflowList');
export type WorkflowList = z.infer<typeof WorkflowListSchema>;

export const OperationSchema = z
  .object({
    op: z.number().int().openapi({ description: 'the operation number: the n of `op-<n>`, in the order the code asked' }),
    callId: z.string().openapi({ description: '`op-<n>`: what approvals (`POST /approve`) and resolutions (`POST /resolve`) name' }),
    kind: z.enum(['step', 'sleep', 'signal', 'child', 'approval', 'now', 'random', 'uuid']),
    name: z.string().openapi({ description: "the step's name, the signal's, the child's definition; the kind for sleeps and values" }),
    status: z.enum(['started', 'retrying', 'succeeded', 'failed']).openapi({
      description: '`started`: running or waiting (no result yet); `retrying`: the last attempt threw and the next waits for `retryAt`',
    }),
    seq: z.number().int().openapi({ description: "seq of the operation's first event" }),
    attempt: z.number().int(),
    policy: z.enum(['rerun', 'idempotency_key', 'verify', 'escalate']).optional(),
    startedAt: z.string().optional().openapi({ description: "ISO time of the operation's first event" }),
    endedAt: z.string().optional().openapi({ description: 'ISO time of its result' }),
    deadline: z.string().optional().openapi({ description: 'ISO time a started step times out, or a wait ends' }),
    retryAt: z.string().optional().openapi({ description: 'for a retrying step: when the next attempt starts' }),
    waitsFor: z
      .object({
        kind: z.enum(['timer', 'signal', 'child', 'approval']),
        signal: z.string().optional().openapi({ description: 'for a signal: the name POST /runs/{id}/signals must give' }),
        argsHash: z.string().optional().openapi({ description: 'for an approval: sha256 of the arguments asked about' }),
      })
      .optional()
      .openapi({ description: 'what a started wait waits for (absent once it has its result)' }),
    child: z
      .object({ runId: z.string(), kind: z.enum(['agent', 'workflow']), name: z.string(), version: z.string() })
      .optional()
      .openapi({ description: 'for ctx.agent / ctx.workflow: the child run (same tenant) and what it runs' }),
    source: z.string().optional().openapi({ description: 'where the result came from: step, signal, human, timer, timeout, child, value, cancel, ...' }),
    sentBy: z.string().optional().openapi({ description: 'who sent the signal or decision' }),
    result: z.unknown().optional().openapi({ description: "a succeeded operation's result (inline, or a blob reference)" }),
    error: z
      .object({ code: z.string(), message: z.string() })
      .optional()
      .openapi({ description: "a failed operation's error, or a retrying step's last error" }),
  })
  .openapi('Operation');
export type OperationView = z.infer<typeof OperationSchema>;

export const OperationPageSchema = z
  .object({
    runId: z.string(),
    workflow: z.object({ name: z.string(), version: z.string() }),
    operations: z.array(OperationSchema),
    next: z.number().int().optional().openapi({ description: 'pass as `after` for the next page' }),
  })
  .openapi('OperationPage');
export type OperationPage = z.infer<typeof OperationPageSchema>;

export const OperationsQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0).openapi({ description: 'operations numbered after this one' }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
