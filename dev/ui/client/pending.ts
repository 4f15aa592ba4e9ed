import { h } from './dom.js';
import { duration, relative, when } from './format.js';
import { pendingCalls, type RunModel } from './run-model.js';

/** What each policy does to a call started with no result, once notAfter + grace has passed. */
export const POLICY_EFFECT: Record<string, string> = {
  rerun: 'runs it again (read-only)',
  idempotency_key: 'runs it again with the same idempotency key',
  verify: 'asks its verify() whether it landed, then records it or runs it again',
  escalate: 'parks the run for a person to resolve',
};

/**
 * Calls started with no result, their policy, and a countdown to when it applies. A call here is
 * either still running or was cut off by a crash; nothing is decided before notAfter + grace.
 */
export function pendingView(m: RunModel, now: number, finished: boolean): HTMLElement {
  const calls = pendingCalls(m);
  const section = h('section', { 'aria-labelledby': 'pending-title' }, h('h2', { id: 'pending-title' }, 'Calls started with no result'));
  if (calls.length === 0) {
    section.append(h('p', { class: 'muted' }, 'None.'));
    return section;
  }
  const list = h('ul', { class: 'pending' });
  for (const c of calls) {
    const policy = c.policy ?? 'escalate';
    const due = c.appliesAt - now;
    const state = finished
      ? 'the run has ended; the call stays unresolved'
      : due > 0
        ? `its policy applies ${relative(c.appliesAt, now)} (at ${when(c.appliesAt, now)}: notAfter + grace ${duration(m.graceMs)})`
        : `its policy could apply since ${when(c.appliesAt, now)}; the run applies it on its next step`;
    list.append(
      h(
        'li',
        { class: due > 0 ? 'waiting' : 'due' },
        h('strong', {}, `${c.name} (${c.callId})`),
        ` attempt ${c.last.attempt}, started ${when(c.last.startedAt, now)}, not after ${when(c.last.notAfter, now)}. `,
        h('span', { class: 'policy' }, `Policy ${policy}: ${POLICY_EFFECT[policy] ?? policy}`),
        '; ',
        state,
        '.',
      ),
    );
  }
  section.append(list);
  return section;
}
