import { LogbookError } from '../core/errors.js';
import { sha256Hex } from '../support/hash.js';
import type { AgentDefinition, AppContextLoader, InstructionsContext } from './types.js';

/**
 * An instructions function (or the application's context loader) threw, or returned no text: the
 * run is refused before anything is written (400 on the API, dropped and counted by the trigger,
 * an error result for a parent's child call).
 */
export class InstructionsError extends LogbookError {
  readonly code = 'instructions_failed';
  constructor(
    readonly agent: string,
    message: string,
  ) {
    super(message);
  }
}

/** How much of the thrown error's message a refusal repeats. */
const CAUSE_MAX = 300;

function cause(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > CAUSE_MAX ? `${text.slice(0, CAUSE_MAX)}…` : text;
}

export interface ResolvedInstructions {
  text: string;
  sha256: string;
  /** True when an instructions function built the text for this run. */
  resolved: boolean;
}

/**
 * The system text a new run pins: the fixed text, or what the agent's function returns for this
 * run's parsed input and context (the application's loader runs first, only for such agents).
 * Called by startRun only, before its first write; never on resume.
 */
export async function resolveInstructions(
  agent: Pick<AgentDefinition, 'name' | 'version' | 'system' | 'promptSha256'>,
  input: unknown,
  run: Omit<InstructionsContext, 'app' | 'agent'>,
  loader: AppContextLoader | undefined,
): Promise<ResolvedInstructions> {
  const text = agent.system.text;
  if (typeof text === 'string') return { text, sha256: agent.promptSha256, resolved: false };
  const id = `${agent.name}@${agent.version}`;
  const who = { name: agent.name, version: agent.version };
  let app: unknown;
  try {
    app = loader ? await loader({ tenant: run.tenant, runId: run.runId, agent: who }) : undefined;
  } catch (error) {
    throw new InstructionsError(agent.name, `the application context for ${id} failed to load: ${cause(error)}`);
  }
  let built: unknown;
  try {
    built = await text(input, { ...run, agent: who, app });
  } catch (error) {
    throw new InstructionsError(agent.name, `the instructions of ${id} failed: ${cause(error)}`);
  }
  if (typeof built !== 'string' || built.trim() === '') {
    throw new InstructionsError(agent.name, `the instructions of ${id} returned ${typeof built === 'string' ? 'empty text' : `a ${typeof built}, not text`}`);
  }
  return { text: built, sha256: sha256Hex(built), resolved: true };
}
