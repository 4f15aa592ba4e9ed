import { h, s } from './dom.js';
import { duration, int, plural, usd } from './format.js';
import type { LogEvent } from './types.js';
import { layoutWaterfall, type Bar, type WaterfallLayout } from './waterfall.js';

const W = 1000;
const LABEL = 290;
const RIGHT = 8;
const ROW = 20;
const TOP = 22;

function detail(b: Bar): string {
  const took = `${b.open ? 'at most ' : ''}${duration(b.end - b.start)}`;
  const tokens = b.inputTokens !== undefined ? ` · ${int(b.inputTokens)} in / ${int(b.outputTokens ?? 0)} out · ${usd(b.costUsd ?? 0)}` : '';
  return `${took}${tokens}${b.failed ? ' · failed' : ''}${b.open ? ' · no result (open or cut off)' : ''}`;
}

const childHref = (runId: string) => `/ui/runs/${encodeURIComponent(runId)}`;

/** A child run's bar links to the child's page. */
function linked(b: Bar, el: SVGElement): SVGElement {
  return b.childRunId ? s('a', { href: childHref(b.childRunId), class: 'wf-child-link' }, el) : el;
}

/**
 * The waterfall, drawn as SVG from the layout: one row per step, model call and tool attempt, the
 * waits between steps as shaded bands. Hover (or focus) a bar for its duration, tokens and cost;
 * the same figures are in the table under it for keyboards and screen readers.
 */
export function waterfallFigure(layout: WaterfallLayout): HTMLElement {
  const { bars, gaps } = layout;
  const figure = h('figure', { class: 'chart waterfall' }, h('figcaption', {}, 'Steps, model calls and tool calls on one time axis'));
  if (bars.length === 0) {
    figure.append(h('p', { class: 'muted' }, 'Nothing has run yet.'));
    return figure;
  }
  const H = TOP + bars.length * ROW + 24;
  const x = (f: number) => LABEL + f * (W - LABEL - RIGHT);
  const models = bars.filter((b) => b.kind === 'model');
  const cost = models.reduce((n, b) => n + (b.costUsd ?? 0), 0);
  const ops = bars.filter((b) => b.kind === 'op' || b.kind === 'wait' || b.kind === 'child').length;
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart-svg waterfall-svg',
    role: 'img',
    'aria-label': `${plural(bars.filter((b) => b.kind === 'step').length, 'step')}, ${plural(models.length, 'model call')} (${usd(cost)}), ${plural(bars.filter((b) => b.kind === 'tool').length, 'tool attempt')}${ops > 0 ? `, ${plural(ops, 'workflow operation')}` : ''} over ${duration(layout.end - layout.start)}; ${plural(gaps.length, 'wait')}`,
  });
  svg.append(
    s('line', { x1: x(0), x2: x(1), y1: H - 22, y2: H - 22, class: 'axis' }),
    s('text', { x: x(0), y: H - 8, class: 'tick' }, '0'),
    s('text', { x: x(0.5), y: H - 8, class: 'tick', 'text-anchor': 'middle' }, duration((layout.end - layout.start) / 2)),
    s('text', { x: x(1), y: H - 8, class: 'tick', 'text-anchor': 'end' }, duration(layout.end - layout.start)),
  );
  for (const g of gaps) {
    const w = Math.max(1, g.width * (W - LABEL - RIGHT));
    svg.append(
      s(
        'rect',
        { x: x(g.x), y: TOP - 6, width: w, height: bars.length * ROW + 6, class: 'wf-gap' },
        s('title', {}, `${g.reason}: ${duration(g.end - g.start)}`),
      ),
    );
    if (w > 60) svg.append(s('text', { x: x(g.x) + w / 2, y: TOP - 10, class: 'tick wf-gap-label', 'text-anchor': 'middle' }, g.reason));
  }
  bars.forEach((b, i) => {
    const y = TOP + i * ROW;
    const x0 = x(b.x);
    const w = Math.max(2, b.width * (W - LABEL - RIGHT));
    const classes = ['wf-bar', b.kind, b.open ? 'open' : '', b.failed ? 'failed' : '', (b.attempt ?? 1) > 1 ? 'retry' : ''].filter(Boolean).join(' ');
    const text = detail(b);
    const after = x0 + w + 4;
    const short =
      b.kind === 'model' && b.inputTokens !== undefined
        ? `${usd(b.costUsd ?? 0)} · ${int((b.inputTokens ?? 0) + (b.outputTokens ?? 0))} tok`
        : duration(b.end - b.start);
    svg.append(
      s(
        'g',
        { class: `wf-row ${b.kind}`, tabindex: '0', 'aria-label': `${b.label}: ${text}` },
        s(
          'text',
          { x: b.kind === 'step' ? 4 : 16, y: y + ROW / 2 + 4, class: `wf-label ${b.kind}` },
          b.label.length > 44 ? `${b.label.slice(0, 43)}…` : b.label,
        ),
        linked(b, s('rect', { x: x0, y: y + 3, width: w, height: ROW - 6, class: classes, 'data-seq': b.seq }, s('title', {}, `${b.label}: ${text}`))),
        s('text', { x: after > W - 90 ? x0 - 4 : after, y: y + ROW / 2 + 4, class: 'tick', 'text-anchor': after > W - 90 ? 'end' : 'start' }, short),
      ),
    );
  });
  const table = h(
    'table',
    { class: 'waterfall-table' },
    h('caption', { class: 'visually-hidden' }, 'The waterfall as a table'),
    h('thead', {}, h('tr', {}, ...['what', 'starts at', 'took', 'tokens', 'cost'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      ...bars.map((b) =>
        h(
          'tr',
          { class: b.kind },
          h('td', {}, b.childRunId ? h('a', { href: childHref(b.childRunId) }, b.label) : b.label, b.failed ? ' (failed)' : '', b.open ? ' (no result)' : ''),
          h('td', { class: 'num' }, `+${duration(b.start - layout.start)}`),
          h('td', { class: 'num' }, `${b.open ? '≤ ' : ''}${duration(b.end - b.start)}`),
          h('td', { class: 'num' }, b.inputTokens !== undefined ? `${int(b.inputTokens)} / ${int(b.outputTokens ?? 0)}` : ''),
          h('td', { class: 'num' }, b.costUsd !== undefined ? usd(b.costUsd) : ''),
        ),
      ),
    ),
  );
  figure.append(
    h('div', { class: 'waterfall-scroll' }, svg),
    h(
      'p',
      { class: 'legend' },
      h('span', { class: 'key key-step' }),
      ' step (one worker, first write to last) ',
      h('span', { class: 'key key-model' }),
      ' model call ',
      h('span', { class: 'key key-tool' }),
      ' tool attempt or workflow step ',
      h('span', { class: 'key key-wait' }),
      ' workflow wait (sleep, signal, approval, child run: a link to it)',
      '; dashed: no result (still running or cut off); striped: a retry; shaded: the run waited',
    ),
    h('details', { class: 'payload' }, h('summary', {}, 'As a table'), h('div', { class: 'table-scroll' }, table)),
  );
  return figure;
}

/** The waterfall section: redrawn from the whole log at most every `throttleMs` while shown. */
export class WaterfallView {
  readonly el: HTMLElement;
  private readonly body = h('div');
  private readonly events: LogEvent[] = [];
  private dirty = true;
  private timer: ReturnType<typeof setTimeout> | undefined;
  visible = false;

  constructor(private readonly throttleMs = 1_000) {
    this.el = h('section', { 'aria-labelledby': 'waterfall-title' }, h('h2', { id: 'waterfall-title', class: 'visually-hidden' }, 'Waterfall'), this.body);
  }

  add(events: LogEvent[]): void {
    if (events.length === 0) return;
    for (const e of events) if (e.seq > (this.events.at(-1)?.seq ?? 0)) this.events.push(e);
    this.dirty = true;
    this.schedule();
  }

  show(visible: boolean): void {
    this.visible = visible;
    if (visible) this.draw();
  }

  /** Open bars grow with the clock: a shown, unfinished run is redrawn now and then. */
  tick(): void {
    const last = this.events.at(-1);
    if (last && !['run_completed', 'run_failed', 'run_cancelled'].includes(last.type)) this.dirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.visible || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.draw();
    }, this.throttleMs);
  }

  private draw(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.body.replaceChildren(waterfallFigure(layoutWaterfall(this.events, Date.now())));
  }
}
