import type { z } from 'zod';
import type { OpKind } from '../../core/workflow-events.js';
import type { AgentDefinition } from '../../authoring/types.js';
import type { ChildRunOptions, StepContext, StepOptions, WorkflowDefinition } from '../../authoring/workflow-types.js';

/**
 * What the code asked for with an operation: the arguments of the ctx call. Only a new operation
 * uses them; a logged one runs on what its events recorded (a resumed sleep keeps its end, a
 * resumed child its input and budgets), the way a tool runs on the arguments read from the log.
 */
export type OpSpec =
  | { kind: 'step'; fn: (ctx: StepContext) => unknown; options: StepOptions<unknown> }
  | { kind: 'sleep'; until: { at: number } | { seconds: number } }
  | { kind: 'signal'; signal: string; payload: z.ZodType; timeoutSeconds: number }
  | { kind: 'approval'; args: unknown; schema?: z.ZodType; timeoutSeconds?: number }
  | {
      kind: 'child';
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      definition: { kind: 'agent'; agent: AgentDefinition<any, any> } | { kind: 'workflow'; workflow: WorkflowDefinition<any, any> };
      input: unknown;
      options: ChildRunOptions;
    }
  | { kind: 'now' }
  | { kind: 'random' }
  | { kind: 'uuid' };

/** One operation the code asked for and has not been given yet. */
export interface OpRequest {
  op: number;
  kind: OpKind;
  name: string;
  spec: OpSpec;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /**
   * new: to be decided; acted: decided, waiting for something outside this step (a time, an inbox
   * item, a person); running: this worker is running it (a step's function, a short in-process wait).
   */
  phase: 'new' | 'acted' | 'running';
  /** When it was decided `acted` with a time: the step's wake-up. */
  until?: number;
  /** Decided `acted` because a person must answer its attention. */
  blocked?: boolean;
}
