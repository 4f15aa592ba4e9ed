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

/**
 * An agent uses a stdio MCP server whose program would not be in the deployed worker (a Lambda
 * function has its bundle and the Node.js runtime, nothing else): the construct refuses to
 * synthesize rather than deploy a worker whose tools cannot start.
 */
export class McpServerNotShippedError extends LogbookError {
  readonly code = 'mcp_server_not_shipped';
  constructor(
    readonly agents: readonly string[],
    readonly server: string,
    readonly tools: readonly string[],
    /** What the worker would lack: the server's script, or its command. */
    readonly missing: string,
  ) {
    super(
      `Logbook: agent ${agents.join(', ')} uses ${tools.join(', ')} from the stdio MCP server ${server}, but ${missing} is not shipped with the worker ` +
        "(a Lambda function has only its bundle and the Node.js runtime). Add `bundle: { entry: '<the server's source, from the project root>' }` " +
        'to its transport and the construct bundles it into the worker; or `bundle: false` if you ship it yourself (a layer); or serve it over Streamable HTTP ({ url }).',
    );
  }
}

/** A stdio MCP server's `bundle.entry` that esbuild could not bundle (no such file or package, a build error). */
export class McpServerBundleError extends LogbookError {
  readonly code = 'mcp_server_bundle_failed';
  constructor(
    readonly agents: readonly string[],
    readonly entry: string,
    reason: string,
  ) {
    super(`Logbook: the MCP server bundle.entry ${entry} (used by agent ${agents.join(', ')}) could not be bundled: ${reason} (paths are from projectRoot)`);
  }
}
