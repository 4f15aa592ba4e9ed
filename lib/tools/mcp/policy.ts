import type { Policy } from '../../core/events.js';
import type { McpListedTool, McpPolicyOverride } from './options.js';

export interface ResolvedPolicy {
  policy: Policy;
  timeoutMs?: number;
  verify?: Extract<McpPolicyOverride, { policy: 'verify' }>['verify'];
}

/**
 * The side-effect policy of one MCP tool. The agent's override wins; otherwise the annotations:
 * read-only → rerun; idempotent → idempotency_key (the key travels in `_meta`); anything else,
 * including no annotations at all, → escalate. `idempotentHint` only counts for a tool that is
 * not read-only (as the MCP spec defines it), and `destructiveHint` never makes a tool safer.
 */
export function policyFor(tool: McpListedTool, override: McpPolicyOverride | undefined, trustAnnotations: boolean): ResolvedPolicy {
  if (typeof override === 'string') return { policy: override };
  if (override) {
    return {
      policy: override.policy,
      ...(override.timeoutMs !== undefined ? { timeoutMs: override.timeoutMs } : {}),
      ...(override.policy === 'verify' ? { verify: override.verify } : {}),
    };
  }
  if (!trustAnnotations) return { policy: 'escalate' };
  const hints = tool.annotations ?? {};
  if (hints.readOnlyHint === true) return { policy: 'rerun' };
  if (hints.idempotentHint === true) return { policy: 'idempotency_key' };
  return { policy: 'escalate' };
}
