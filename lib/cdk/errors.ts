import { LogbookError } from '../core/errors.js';

/**
 * Synth-time failures of the `Logbook` construct, one class per failure mode. They surface in
 * `cdk synth` output, so each message names the prop, the file and what to change.
 */

/** A file the construct was pointed at (`agents`, `handlers.*`) does not exist. */
export class ProjectFileNotFoundError extends LogbookError {
  readonly code = 'project_file_not_found';
  constructor(
    readonly prop: string,
    readonly file: string,
    readonly lookedAt: string,
  ) {
    super(`Logbook: ${prop} ${file} not found (looked at ${lookedAt}; relative paths are from projectRoot)`);
  }
}

/** The agents module loaded, but its default export is not `defineAgents(...)` nor a function returning it. */
export class AgentsModuleInvalidError extends LogbookError {
  readonly code = 'agents_module_invalid';
  constructor(
    readonly agentsModule: string,
    readonly found: string,
  ) {
    super(
      `Logbook: the default export of ${agentsModule} is ${found}, not defineAgents(...) ` +
        '(write `export default defineAgents({ agents: [...] })`, or a function returning it)',
    );
  }
}

/** Importing the agents module (or calling its default export) threw at synth time. */
export class AgentsModuleLoadError extends LogbookError {
  readonly code = 'agents_module_load_failed';
  constructor(
    readonly agentsModule: string,
    readonly reason: string,
  ) {
    super(
      `Logbook: could not load ${agentsModule} to read the models its agents pin: ${reason} ` +
        '(pass `models: [...]` to the construct to skip loading it at synth time)',
    );
  }
}

/** A pinned `bedrock:` model id that is neither a model id, an inference profile id nor a Bedrock ARN. */
export class BedrockModelIdError extends LogbookError {
  readonly code = 'bedrock_model_id_invalid';
  constructor(
    readonly modelId: string,
    detail: string,
  ) {
    super(`Logbook: cannot grant bedrock:InvokeModel for bedrock:${modelId}: ${detail}`);
  }
}
