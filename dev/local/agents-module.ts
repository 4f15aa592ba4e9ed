import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../../lib/core/errors.js';
import { isAgents, resolveAgents } from '../../lib/authoring/define-agents.js';
import { type Agents, type AgentsSource } from '../../lib/authoring/define-agents.js';

/**
 * Load an application's agents module (TypeScript or JavaScript): its default export, or an
 * export named `agents`, is `defineAgents(...)` or a function returning it.
 */
export async function loadAgentsModule(path: string): Promise<Agents> {
  const file = resolve(path);
  if (!existsSync(file)) throw new ConfigError(`agents module ${path} not found (looked at ${file})`);
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown; agents?: unknown };
  const exported = mod.default ?? mod.agents;
  if (exported === undefined) {
    throw new ConfigError(`agents module ${path} exports neither a default nor \`agents\`: end it with \`export default defineAgents({ agents: [...] })\``);
  }
  if (typeof exported !== 'function' && !isAgents(exported)) {
    throw new ConfigError(`agents module ${path}: its export is not the value of defineAgents(...)`);
  }
  return (await resolveAgents(exported as AgentsSource)) as Agents;
}
