import type { Caller } from './tenant.js';

/** What every route handler sees: the caller the app's middleware resolved. */
export type ApiEnv = { Variables: { caller: Caller } };

export interface ApiLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
