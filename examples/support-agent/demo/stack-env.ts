import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The support app's agents module, as `logbook dev --agents` takes it. */
export const SUPPORT_AGENTS_MODULE = fileURLToPath(new URL('../agents.ts', import.meta.url));

/** Where the fake services record side effects: a file, so the record survives a killed worker. */
export const ledgerPath = (workDir: string) => join(workDir, 'ledger.jsonl');

/** The support app's own settings for its worker processes (read by agents.ts). */
export function supportEnv(workDir: string, toolDelayMs: number): Record<string, string> {
  return { SUPPORT_LEDGER_FILE: ledgerPath(workDir), SUPPORT_TOOL_DELAY_MS: String(toolDelayMs) };
}
