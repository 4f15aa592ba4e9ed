import { firingsBetween, nextFiring } from '../../lib/core/cron.js';
import type { ScheduledDefinition } from '../../lib/authoring/registry.js';
import type { ScheduleHandlerResult } from '../../lib/lambda/schedule-handler.js';

/** What the local timer hands each due firing to: the deployed schedule handler's event. */
export type FiringHandler = (event: { schedule: string; scheduledTime: string; tenant: string }) => Promise<ScheduleHandlerResult>;

/** A firing the timer handed over, and what the handler answered (or the error it threw). */
export interface LocalFiring {
  schedule: string;
  scheduledTime: string;
  result?: ScheduleHandlerResult;
  error?: string;
}

/**
 * The local stack's EventBridge Scheduler: on each `tick(now)` it hands every firing of every
 * schedule due in (the previous tick, now] to the same handler a deployed schedule invokes,
 * under the local tenant. Firings before the stack started are not caught up (as a schedule
 * created now would not); a tick with the same or an earlier `now` fires nothing. No clock of its
 * own: the stack ticks it from a timer, a test with the times it chooses.
 */
export class LocalScheduleTimer {
  private last: number;
  readonly fired: LocalFiring[] = [];

  constructor(
    private readonly schedules: readonly ScheduledDefinition[],
    private readonly handler: FiringHandler,
    private readonly tenant: string,
    startedAt: number,
  ) {
    this.last = startedAt;
  }

  /** The banner's lines: each schedule with its cron, zone, overlap rule and next firing after `now`. */
  describe(now: number): string[] {
    return this.schedules.map((s) => {
      const next = nextFiring(s.schedule.parsed, s.schedule.timezone, now);
      return `${s.name} ${s.schedule.cron} ${s.schedule.timezone} (overlap ${s.schedule.overlap}), next ${next === undefined ? 'never' : new Date(next).toISOString()}`;
    });
  }

  /** Hand over every firing due in (previous tick, now]; answers them in order. */
  async tick(now: number): Promise<LocalFiring[]> {
    if (now <= this.last) return [];
    const from = this.last;
    this.last = now;
    const due = this.schedules
      .flatMap((s) => firingsBetween(s.schedule.parsed, s.schedule.timezone, from, now).map((at) => ({ s, at })))
      .sort((a, b) => a.at - b.at);
    const out: LocalFiring[] = [];
    for (const { s, at } of due) {
      const firing: LocalFiring = { schedule: s.name, scheduledTime: new Date(at).toISOString() };
      try {
        firing.result = await this.handler({ schedule: s.name, scheduledTime: firing.scheduledTime, tenant: this.tenant });
      } catch (error) {
        firing.error = error instanceof Error ? error.message : String(error);
      }
      out.push(firing);
      this.fired.push(firing);
    }
    return out;
  }
}
