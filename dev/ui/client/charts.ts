import { h, s } from './dom.js';
import { duration, int, plural, usd } from './format.js';
import { spans, type RunModel } from './run-model.js';

const W = 640;

/**
 * Tokens per model step as stacked bars (input below, output above), with each step's cost over
 * its bar. SVG drawn from numbers only; every label is a text node.
 */
export function tokensChart(m: RunModel): HTMLElement {
  const steps = m.steps;
  const figure = h('figure', { class: 'chart' }, h('figcaption', {}, 'Tokens and cost per model step'));
  if (steps.length === 0) {
    figure.append(h('p', { class: 'muted' }, 'No model step yet.'));
    return figure;
  }
  const H = 180;
  const top = 24;
  const bottom = 24;
  const left = 48;
  const max = Math.max(1, ...steps.map((st) => st.inputTokens + st.outputTokens));
  const slot = (W - left) / steps.length;
  const bar = Math.max(4, Math.min(48, slot * 0.6));
  const y = (v: number) => H - bottom - (v / max) * (H - top - bottom);
  const total = steps.reduce((n, st) => n + st.costUsd, 0);
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart-svg',
    role: 'img',
    'aria-label': `${plural(steps.length, 'model step')}, at most ${int(max)} ${max === 1 ? 'token' : 'tokens'} in one step, ${usd(total)} in all`,
  });
  svg.append(
    s('line', { x1: left, x2: W, y1: y(0), y2: y(0), class: 'axis' }),
    s('text', { x: left - 6, y: y(max) + 4, class: 'tick', 'text-anchor': 'end' }, int(max)),
    s('text', { x: left - 6, y: y(0) + 4, class: 'tick', 'text-anchor': 'end' }, '0'),
  );
  steps.forEach((st, i) => {
    const x = left + i * slot + (slot - bar) / 2;
    const inTop = y(st.inputTokens);
    const outTop = y(st.inputTokens + st.outputTokens);
    const label = `step ${st.step}: ${int(st.inputTokens)} input + ${int(st.outputTokens)} output ${st.outputTokens === 1 ? 'token' : 'tokens'}, ${usd(st.costUsd)}${st.failed ? `, failed (${st.failed})` : ''}`;
    svg.append(
      s('rect', { x, y: inTop, width: bar, height: Math.max(0, y(0) - inTop), class: 'bar-in' }, s('title', {}, label)),
      s('rect', { x, y: outTop, width: bar, height: Math.max(0, inTop - outTop), class: 'bar-out' }, s('title', {}, label)),
      s('text', { x: x + bar / 2, y: H - 8, class: 'tick', 'text-anchor': 'middle' }, String(st.step)),
      s('text', { x: x + bar / 2, y: outTop - 4, class: 'tick cost', 'text-anchor': 'middle' }, st.endedAt === undefined ? '…' : usd(st.costUsd)),
    );
  });
  figure.append(
    svg,
    h('p', { class: 'legend' }, h('span', { class: 'key key-in' }), ' input tokens ', h('span', { class: 'key key-out' }), ' output tokens; cost above each bar'),
  );
  return figure;
}

/**
 * Model calls and tool attempts on one time axis from the start of the run: what took long, what
 * ran in parallel, and what was cut off (drawn to now, dashed).
 */
export function durationStrip(m: RunModel, now: number): HTMLElement {
  const all = spans(m);
  const figure = h('figure', { class: 'chart' }, h('figcaption', {}, 'Model and tool durations'));
  if (all.length === 0 || m.startedAt === undefined) {
    figure.append(h('p', { class: 'muted' }, 'Nothing has run yet.'));
    return figure;
  }
  const start = m.startedAt;
  const end = Math.max(m.terminal?.at ?? now, ...all.map((sp) => sp.end ?? start), start + 1);
  const left = 48;
  const lane = 22;
  const H = 2 * lane + 36;
  const x = (t: number) => left + ((t - start) / (end - start)) * (W - left - 4);
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart-svg',
    role: 'img',
    'aria-label': `${plural(all.filter((sp) => sp.kind === 'model').length, 'model call')} and ${plural(all.filter((sp) => sp.kind === 'tool').length, 'tool attempt')} over ${duration(end - start)}`,
  });
  svg.append(
    s('text', { x: 0, y: 8 + lane / 2 + 4, class: 'tick' }, 'model'),
    s('text', { x: 0, y: 8 + lane + lane / 2 + 4, class: 'tick' }, 'tools'),
    s('line', { x1: left, x2: W - 4, y1: H - 24, y2: H - 24, class: 'axis' }),
    s('text', { x: left, y: H - 8, class: 'tick' }, '0'),
    s('text', { x: W - 4, y: H - 8, class: 'tick', 'text-anchor': 'end' }, duration(end - start)),
  );
  for (const sp of all) {
    const until = sp.end ?? Math.min(now, sp.notAfter ?? now);
    const x0 = x(sp.start);
    const x1 = x(until);
    const row = sp.kind === 'model' ? 0 : 1;
    const took = sp.end === undefined ? `${duration(until - sp.start)} so far` : sp.unknown ? `at most ${duration(until - sp.start)}` : duration(until - sp.start);
    svg.append(
      s(
        'rect',
        {
          x: x0,
          y: 8 + row * lane + 3,
          width: Math.max(2, x1 - x0),
          height: lane - 6,
          class: `span span-${sp.kind}${sp.unknown ? ' open' : ''}${sp.ok ? '' : ' failed'}`,
        },
        s('title', {}, `${sp.label}: ${took}`),
      ),
    );
  }
  figure.append(svg);
  return figure;
}
