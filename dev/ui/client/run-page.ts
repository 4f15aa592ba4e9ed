import { ActionLog } from './action-log.js';
import { ActionsPanel } from './actions.js';
import { ApiError, errorText, events, getRun, stream } from './api.js';
import { AttentionPanel } from './attention.js';
import { budgetsView } from './budgets.js';
import { durationStrip, tokensChart } from './charts.js';
import { fill, h } from './dom.js';
import { dateTime, plural, pretty, short, truncate } from './format.js';
import { pendingView } from './pending.js';
import { OperationsView } from './operations.js';
import { emptyModel } from './run-model.js';
import { RunViews } from './run-views.js';
import { RunFeed } from './stream-feed.js';
import { Timeline } from './timeline.js';
import { TERMINAL, definitionOf, type RunView } from './types.js';

const WAIT_SECONDS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function statusBadge(status: string): HTMLElement {
  return h('span', { class: `status status-${status}` }, status === 'parked' ? 'parked: needs a person' : status);
}

/** Status, agent, pinned model and prompt, the outcome: the facts at the top of the page. */
function summaryView(view: RunView): HTMLElement {
  const facts: [string, string | Node][] = [
    ['Status', statusBadge(view.status)],
  ];
  const definition = definitionOf(view);
  facts.push([definition.kind === 'workflow' ? 'Workflow' : 'Agent', definition.label]);
  if (view.parent) {
    facts.push(['Parent', h('span', {}, h('a', { href: `/ui/runs/${encodeURIComponent(view.parent.runId)}` }, view.parent.runId), ` (${view.parent.callId})`)]);
  }
  if (view.pinned) {
    facts.push(['Model', view.pinned.model]);
    facts.push(['Prompt', h('span', {}, `${view.pinned.prompt.version} `, h('code', { class: 'hash', title: view.pinned.prompt.sha256 }, `sha256 ${view.pinned.prompt.sha256}`))]);
    facts.push(['Tools', view.pinned.tools.map((t) => `${t.name}@${t.version} (${t.policy}, schema ${short(t.schemaHash, 8)})`).join(', ')]);
  }
  facts.push(['Created', dateTime(view.createdAt)], ['Updated', dateTime(view.updatedAt)], ['Last seq', String(view.lastSeq)]);
  if (view.result !== undefined) facts.push(['Answer', h('pre', { class: 'json answer' }, truncate(pretty(view.result), 2000))]);
  if (view.failure) facts.push(['Failure', `${view.failure.code}: ${view.failure.message}`]);
  if (view.park) facts.push(['Park', `${view.park.reason}: ${view.park.detail}`]);
  return h('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/**
 * The run page: the facts, what needs a person with its actions, calls started with no result,
 * budgets, charts, and the timeline, all kept live by long-polling the log. The head (GET /runs/id)
 * is read again after new events: it is projected at the end of a step, so it trails the log.
 */
export async function runPage(root: HTMLElement, runId: string): Promise<void> {
  // Phase 1: the skeleton and the first view (a missing or another tenant's run is a 404).
  const model = emptyModel();
  const log = new ActionLog();
  const timeline = new Timeline(runId, model);
  const views = new RunViews(runId, timeline);
  const attention = new AttentionPanel(runId, model, log);
  const actions = new ActionsPanel(runId, model, log);
  const summary = h('section', { 'aria-label': 'summary' });
  const live = h('p', { class: 'live', role: 'status' }, 'Loading…');
  const pending = h('div');
  const operations = new OperationsView(runId);
  const opsHolder = h('div');
  const budgets = h('div');
  const charts = h('section', { 'aria-labelledby': 'charts-title' });
  const title = h('h1', {}, 'Run ', h('code', {}, runId));
  fill(root, h('p', {}, h('a', { href: '/ui/' }, '← All runs')), title, live, summary, attention.el, actions.el, log.el, opsHolder, pending, budgets, charts, views.el);
  document.title = `${runId} · Logbook inspector`;

  let view: RunView;
  try {
    view = await getRun(runId);
  } catch (error) {
    fill(root, h('p', {}, h('a', { href: '/ui/' }, '← All runs')), title, h('p', { class: 'error', role: 'alert' }, error instanceof ApiError && error.status === 404 ? `No run ${runId} for this tenant.` : errorText(error)));
    return;
  }

  const render = () => {
    const now = Date.now();
    fill(summary, summaryView(view));
    if (definitionOf(view).kind === 'workflow') {
      if (!opsHolder.firstChild) opsHolder.append(operations.el);
      operations.refresh(Math.max(view.lastSeq, model.lastSeq));
    }
    attention.render(view, now);
    actions.render(view);
    log.update(model);
    fill(pending, pendingView(model, now, TERMINAL.has(view.status)));
    fill(budgets, budgetsView(view, now));
    fill(charts, h('h2', { id: 'charts-title' }, 'Tokens, cost and durations'), h('div', { class: 'charts' }, tokensChart(model), durationStrip(model, now)));
  };

  // The head trails the log: read it now, and once more a moment later to catch the projection.
  let refreshing: Promise<void> | undefined;
  const refresh = async () => {
    refreshing ??= getRun(runId)
      .then((v) => {
        view = v;
        render();
      })
      .catch(() => undefined)
      .finally(() => {
        refreshing = undefined;
      });
    await refreshing;
  };

  // Phase 2: catch up with the run stream (or the log, from an API without one), page by page.
  const feed = new RunFeed(runId, { stream, events });
  for (;;) {
    const page = await feed.next();
    views.apply(page.items);
    if (!page.more) break;
  }
  views.streaming(feed.mode);
  render();
  const timer = setInterval(() => (render(), views.tick()), 1_000);

  // Phase 3: follow it. The API does not wait on a finished run, so stop once it is finished.
  live.textContent = 'Live: following the log.';
  for (;;) {
    if (model.terminal && TERMINAL.has(view.status)) break;
    try {
      const page = await feed.next(model.terminal ? 1 : WAIT_SECONDS);
      live.textContent = 'Live: following the log.';
      live.className = 'live';
      views.apply(page.items);
      if (page.events.length > 0) {
        log.update(model);
        if (page.more) continue;
        await refresh();
        setTimeout(() => void refresh(), 1_500);
      } else if (page.items.length === 0) {
        await refresh();
      }
    } catch (error) {
      // Reconnect after the last item applied, waiting longer after each failure in a row.
      const wait = feed.retryDelay();
      live.textContent = `Connection lost (${errorText(error)}); trying again in ${(wait / 1000).toFixed(1)} s.`;
      live.className = 'live error';
      await sleep(wait);
    }
  }
  await refresh();
  clearInterval(timer);
  render();
  live.textContent = `Finished: ${view.status}. The log is complete (${plural(model.lastSeq, 'event')}).`;
}
