import { ApiError, errorText, getRun, listRuns, runCounts } from './api.js';
import { fill, h } from './dom.js';
import { dateTime, int, truncate, usd } from './format.js';
import { NEEDS_A_PERSON, RUN_STATUSES, definitionOf, type RunCounts, type RunSummary } from './types.js';

const PAGE_SIZE = 20;
const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;

interface State {
  status: string;
  /** Cursors of the pages before this one; the last is this page's own. */
  cursors: (string | undefined)[];
  next?: string;
  runs: RunSummary[];
  /** Exact, from GET /run-counts (every status the API has, and the total). */
  counts?: RunCounts;
  filter: string;
}

const runLink = (runId: string) => `/ui/runs/${encodeURIComponent(runId)}`;

const PERSON_LABEL: Record<string, string> = { parked: '⚑ parked: needs a person', awaiting_approval: '⚑ awaits approval' };

/** The agent, or for a workflow run the workflow, marked as one. */
function definitionCell(r: RunSummary): HTMLTableCellElement {
  const d = definitionOf(r);
  return h('td', { class: `definition ${d.kind}` }, d.kind === 'workflow' ? h('span', { class: 'badge kind' }, 'workflow') : '', d.kind === 'workflow' ? ' ' : '', d.label);
}

function runRow(r: RunSummary): HTMLTableRowElement {
  const person = NEEDS_A_PERSON.includes(r.status);
  return h(
    'tr',
    { class: person ? 'needs-person' : '' },
    h('td', {}, h('a', { href: runLink(r.runId) }, r.runId)),
    h('td', {}, h('span', { class: `status status-${r.status}` }, PERSON_LABEL[r.status] ?? r.status)),
    definitionCell(r),
    h('td', { class: 'num' }, r.usage.steps),
    h('td', { class: 'num' }, int(r.usage.inputTokens + r.usage.outputTokens)),
    h('td', { class: 'num' }, usd(r.usage.costUsd)),
    h('td', { class: 'time' }, dateTime(r.updatedAt)),
    h('td', {}, truncate(r.summary ?? '', 90)),
  );
}

/**
 * The tenant's runs, newest first: filter by status (with counts), find a run by id, page through
 * them; refreshed every few seconds. Runs that wait for a person are marked and counted on top.
 */
export async function runsPage(root: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.search);
  const state: State = { status: RUN_STATUSES.includes(params.get('status') as never) ? (params.get('status') ?? '') : '', cursors: [undefined], runs: [], filter: '' };

  // Phase 1: the page's parts.
  const banner = h('p', { class: 'banner', hidden: true });
  const filters = h('div', { class: 'filters', role: 'group', 'aria-label': 'filter by status' });
  const search = h('input', { id: 'run-search', type: 'search', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'run-search-error' });
  const searchError = h('p', { id: 'run-search-error', class: 'error', role: 'alert' });
  const form = h('form', { class: 'search', role: 'search' }, h('label', { for: 'run-search' }, 'Run id'), search, h('button', { type: 'submit' }, 'Open'), searchError);
  const body = h('tbody');
  const empty = h('p', { class: 'muted', hidden: true }, 'No runs.');
  const older = h('button', { type: 'button', class: 'secondary' }, 'Older →');
  const newer = h('button', { type: 'button', class: 'secondary' }, '← Newer');
  const live = h('p', { class: 'live', role: 'status' }, 'Loading…');
  const table = h(
    'table',
    { class: 'runs' },
    h('caption', { class: 'visually-hidden' }, 'Runs, newest first'),
    h('thead', {}, h('tr', {}, ...['Run', 'Status', 'Agent or workflow', 'Steps', 'Tokens', 'Cost', 'Updated', 'Summary'].map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  fill(root, h('h1', {}, 'Runs'), banner, form, filters, live, h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'runs table' }, table), empty, h('nav', { class: 'pager', 'aria-label': 'pages' }, newer, older));
  document.title = 'Runs · Logbook inspector';

  // Phase 2: drawing from state; rows are redrawn only when they changed, so focus survives a refresh.
  let drawn = '';
  const draw = () => {
    const shown = state.filter ? state.runs.filter((r) => r.runId.toLowerCase().includes(state.filter.toLowerCase())) : state.runs;
    const key = JSON.stringify(shown);
    if (key !== drawn) {
      drawn = key;
      fill(body, ...shown.map(runRow));
    }
    empty.hidden = shown.length > 0;
    empty.textContent = state.filter ? `No run on this page matches "${state.filter}"; press Open to look it up by id.` : 'No runs.';
    older.disabled = state.next === undefined;
    newer.disabled = state.cursors.length <= 1;
    const buttons = [['', 'All'], ...RUN_STATUSES.map((st) => [st, st.replace(/_/g, ' ')])].map(([value = '', label = '']) => {
      const count = state.counts === undefined ? undefined : value === '' ? state.counts.total : state.counts.counts[value as keyof RunCounts['counts']];
      const b = h('button', { type: 'button', class: 'filter', 'aria-pressed': String(state.status === value) }, label, count === undefined ? '' : ` (${count})`);
      b.addEventListener('click', () => {
        state.status = value;
        state.cursors = [undefined];
        const url = new URL(location.href);
        if (value) url.searchParams.set('status', value);
        else url.searchParams.delete('status');
        history.replaceState(null, '', url);
        void load();
      });
      return b;
    });
    const focused = filters.contains(document.activeElement) ? (document.activeElement as HTMLElement).textContent : undefined;
    fill(filters, ...buttons);
    if (focused) buttons.find((b) => b.textContent === focused)?.focus();
    // Runs that wait for a person: parked (an outcome nobody knows, a park) or awaiting approval.
    const waiting = NEEDS_A_PERSON.map((st) => [st, state.counts?.counts[st] ?? 0] as const).filter(([, n]) => n > 0);
    const people = waiting.reduce((n, [, c]) => n + c, 0);
    banner.hidden = people === 0;
    fill(
      banner,
      people === 1 ? '⚑ 1 run waits for a person: ' : `⚑ ${people} runs wait for a person: `,
      ...waiting.flatMap(([st, n], i) => [i > 0 ? ', ' : '', h('a', { href: `/ui/?status=${st}` }, `${n} ${st === 'parked' ? 'parked' : 'awaiting approval'}`)]),
      '.',
    );
  };

  // Phase 3: loading, live.
  const load = async () => {
    try {
      const cursor = state.cursors.at(-1);
      const page = await listRuns({ limit: PAGE_SIZE, ...(state.status ? { status: state.status } : {}), ...(cursor ? { cursor } : {}) });
      state.runs = page.runs;
      if (page.cursor) state.next = page.cursor;
      else delete state.next;
      live.textContent = `Live: refreshed at ${new Date().toLocaleTimeString()}.`;
      live.className = 'live';
    } catch (error) {
      live.textContent = `Could not load runs: ${errorText(error)}`;
      live.className = 'live error';
    }
    draw();
  };
  const loadCounts = async () => {
    state.counts = (await runCounts().catch(() => undefined)) ?? state.counts;
    draw();
  };

  older.addEventListener('click', () => {
    if (state.next === undefined) return;
    state.cursors.push(state.next);
    void load();
  });
  newer.addEventListener('click', () => {
    if (state.cursors.length <= 1) return;
    state.cursors.pop();
    void load();
  });
  search.addEventListener('input', () => {
    state.filter = search.value.trim();
    searchError.textContent = '';
    search.removeAttribute('aria-invalid');
    draw();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const runId = search.value.trim();
    if (!RUN_ID.test(runId)) {
      searchError.textContent = 'A run id is 1 to 80 letters, digits, "_" or "-". Nothing was sent.';
      search.setAttribute('aria-invalid', 'true');
      return;
    }
    try {
      await getRun(runId);
      location.assign(runLink(runId));
    } catch (error) {
      searchError.textContent = error instanceof ApiError && error.status === 404 ? `No run ${runId} for this tenant.` : errorText(error);
    }
  });

  await Promise.all([load(), loadCounts()]);
  let ticks = 0;
  setInterval(() => {
    if (document.hidden) return;
    void load();
    if (++ticks % 3 === 0) void loadCounts();
  }, 3_000);
}
