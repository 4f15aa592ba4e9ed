import type { Policy } from '../../core/events.js';
import type { McpListedTool, McpPolicyOverride } from './options.js';

export interface ResolvedPolicy {
  policy: Policy;
  timeoutMs?: number;
  verify?: Extract<McpPolicyOverride, { policy: 'verify' }>['verify'];
}

type Hints = NonNullable<McpListedTool['annotations']>;

/**
 * Hints that cannot all be true, so none of them is believed: a read-only tool cannot be
 * destructive, nor have an effect when repeated (`idempotentHint: false`); a hint that is not a
 * boolean was not written by an honest server. The MCP spec only defines `idempotentHint` and
 * `destructiveHint` for tools that are not read-only, so a server that sets them on a read-only
 * tool says two things at once.
 */
export function contradictoryHints(hints: Hints): boolean {
  const values = [hints.readOnlyHint, hints.idempotentHint, hints.destructiveHint, hints.openWorldHint];
  if (values.some((v) => v !== undefined && typeof v !== 'boolean')) return true;
  return hints.readOnlyHint === true && (hints.destructiveHint === true || hints.idempotentHint === false);
}

/**
 * Whether a tool may destroy something, as the MCP spec reads annotations: `destructiveHint`
 * defaults to true for a tool that is not read-only, so only a consistent `readOnlyHint: true`
 * or an explicit `destructiveHint: false` says it does not. Used to add approvals, where the
 * spec's conservative default is the right one.
 */
export function mayDestroy(tool: McpListedTool): boolean {
  const hints = tool.annotations ?? {};
  if (contradictoryHints(hints)) return true;
  if (hints.readOnlyHint === true) return false;
  return hints.destructiveHint !== false;
}

/**
 * The side-effect policy of one MCP tool. The agent's override wins. Otherwise, only when the
 * application trusts the server's annotations: read-only → rerun; idempotent → idempotency_key
 * (the key travels in `_meta`). Everything else escalates: no annotations, untrusted ones, an
 * explicit `destructiveHint: true` (whatever else is claimed: a destructive tool is never
 * repeated on the server's word), and hints that contradict each other (a server that says a
 * tool is both read-only and destructive is not believed on either).
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
  if (hints.destructiveHint === true || contradictoryHints(hints)) return { policy: 'escalate' };
  if (hints.readOnlyHint === true) return { policy: 'rerun' };
  if (hints.idempotentHint === true) return { policy: 'idempotency_key' };
  return { policy: 'escalate' };
}
