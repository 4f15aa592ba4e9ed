/**
 * The inspector's stylesheet, served as /ui/assets/inspector.css (a module, so that the compiled
 * package ships it in dist/ with the rest). No inline styles anywhere: the CSP forbids them.
 */
export const INSPECTOR_CSS = `
:root {
  --bg: #f6f7f9; --fg: #1b1f24; --muted: #5b6470; --line: #d8dde3; --card: #fff;
  --accent: #1f5fa8; --ok: #1d7a3a; --err: #b3261e; --warn: #8a5a00; --person: #fff4d6; --person-line: #e0a400;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  color-scheme: light;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; }
.skip:focus { left: .5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
header.top { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; padding: .6rem 1rem; background: #1f3a5f; color: #f4f7fb; }
header.top .brand { color: inherit; font-weight: 600; text-decoration: none; }
header.top .where { color: #c9d6e6; font-size: .9rem; overflow-wrap: anywhere; }
main { padding: 1rem; max-width: 1400px; margin: 0 auto; }
main:focus { outline: none; }
h1 { font-size: 1.4rem; margin: .2rem 0 .6rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
h3 { font-size: 1rem; margin: 0 0 .4rem; }
section { margin-bottom: 1rem; }
code, pre { font-family: var(--mono); font-size: .85rem; }
pre.json { background: #f0f2f5; border: 1px solid var(--line); padding: .5rem; margin: .3rem 0; max-height: 24rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.error { color: var(--err); }
.error:empty { display: none; }
.ok { color: var(--ok); }
.live { color: var(--muted); font-size: .9rem; margin: .2rem 0 .6rem; }
.live.error { color: var(--err); }
button { font: inherit; padding: .35rem .8rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary, button.filter { background: var(--card); color: var(--accent); }
button.danger { background: var(--err); border-color: var(--err); }
button[disabled] { opacity: .5; cursor: not-allowed; }
button.filter[aria-pressed="true"] { background: var(--accent); color: #fff; }
input, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; color: var(--fg); }
textarea { width: 100%; font-family: var(--mono); font-size: .85rem; }
[aria-invalid="true"] { border-color: var(--err); box-shadow: 0 0 0 1px var(--err); }
label { display: block; font-weight: 600; margin: .5rem 0 .2rem; }
.buttons { display: flex; gap: .5rem; flex-wrap: wrap; margin: .5rem 0; }
.filters { display: flex; gap: .4rem; flex-wrap: wrap; margin: .6rem 0; }
form.search { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
form.search label { margin: 0; }
form.search .error { flex-basis: 100%; margin: .2rem 0 0; }
.banner { background: var(--person); border: 1px solid var(--person-line); padding: .5rem .8rem; border-radius: 6px; font-weight: 600; }
.table-scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); background: #fafbfc; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.time { font-family: var(--mono); font-size: .8rem; white-space: nowrap; }
table.runs td:first-child { white-space: nowrap; }
tr.needs-person { background: var(--person); }
tr.needs-person td:first-child { box-shadow: inset 4px 0 0 var(--person-line); }
.status { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .8rem; font-weight: 600; background: #e8ecf1; white-space: nowrap; }
.status-completed { background: #dcf2e3; color: var(--ok); }
.status-failed { background: #fbe2e0; color: var(--err); }
.status-cancelled { background: #eceff3; color: var(--muted); }
.status-parked { background: var(--person); color: var(--warn); border: 1px solid var(--person-line); }
.status-awaiting_approval { background: var(--person); color: var(--warn); border: 1px solid var(--person-line); }
.actions .card, .more-actions .card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .2rem .8rem .6rem; margin-bottom: .6rem; }
.actions .attention .card { background: var(--person); border-color: var(--person-line); }
ul.issues { margin: .2rem 0; padding-left: 1.2rem; }
.schema-form .field { margin-bottom: .4rem; }
select { font: inherit; max-width: 100%; }
.status-running, .status-waiting { background: #e3eefb; color: var(--accent); }
.badge { font-size: .75rem; font-weight: 700; padding: 0 .35rem; border-radius: 4px; }
.badge.ok { background: #dcf2e3; }
.badge.error { background: #fbe2e0; color: var(--err); }
.pager { display: flex; gap: .5rem; justify-content: flex-end; margin: .6rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .7rem; margin: 0; }
dl.facts dt { font-weight: 600; color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code.hash { font-size: .8rem; overflow-wrap: anywhere; }
.attention .card { background: var(--person); border: 1px solid var(--person-line); border-radius: 6px; padding: .8rem; margin-bottom: .6rem; }
.card .confirm { background: var(--card); border: 1px dashed var(--accent); border-radius: 6px; padding: .6rem; margin-top: .5rem; }
section.cancel { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .2rem .8rem .6rem; }
section.cancel .confirm { border: 1px dashed var(--err); border-radius: 6px; padding: .6rem; margin-top: .5rem; }
ul.action-log li.recorded { color: var(--ok); }
ul.action-log li.refused { color: var(--err); }
ul.pending li { margin-bottom: .3rem; }
ul.pending li.due { color: var(--warn); }
dl.budgets { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: .6rem; margin: 0; }
dl.budgets .budget { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .7rem; }
dl.budgets dt { font-weight: 600; }
dl.budgets dd { margin: .2rem 0 0; }
dl.budgets meter { width: 100%; height: 1rem; display: block; }
dl.budgets .near dt { color: var(--warn); }
dl.budgets .over dt { color: var(--err); }
.budget-text { font-size: .85rem; color: var(--muted); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: .8rem; }
figure.chart { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; }
figure.chart figcaption { font-weight: 600; margin-bottom: .3rem; }
svg.chart-svg { width: 100%; height: auto; display: block; }
svg .axis { stroke: var(--line); stroke-width: 1; }
svg .tick { font: 11px var(--mono); fill: var(--muted); }
svg .bar-in, .key-in { fill: #5b8fd1; background: #5b8fd1; }
svg .bar-out, .key-out { fill: #e39b3b; background: #e39b3b; }
svg .span-model { fill: #5b8fd1; }
svg .span-tool { fill: #3aa370; }
svg .span.failed { fill: var(--err); }
svg .span.open { fill-opacity: .35; stroke: var(--warn); stroke-dasharray: 4 3; }
.legend { font-size: .85rem; color: var(--muted); margin: .3rem 0 0; }
.key { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; vertical-align: middle; }
table.timeline { font-size: .9rem; }
table.timeline td.details { min-width: 20rem; width: 40%; }
table.timeline .sub { display: block; color: var(--muted); font-size: .8rem; }
table.timeline .what { display: block; overflow-wrap: anywhere; }
table.timeline tr.type-attention_required { background: var(--person); }
table.timeline tr.type-run_failed { background: #fdf0ef; }
table.timeline tr.type-run_completed { background: #eef8f1; }
details.payload { margin: .2rem 0; }
details.payload summary { cursor: pointer; color: var(--accent); }
.blob-status.ok { color: var(--ok); }
.blob-status.error { color: var(--err); }
.tabs { display: flex; gap: .3rem; border-bottom: 1px solid var(--line); margin: 1.2rem 0 .6rem; }
.tabs .tab { background: transparent; color: var(--accent); border: 1px solid transparent; border-bottom: 0; border-radius: 6px 6px 0 0; margin-bottom: -1px; }
.tabs .tab[aria-selected="true"] { background: var(--card); color: var(--fg); border-color: var(--line); font-weight: 600; }
ol.conversation { list-style: none; padding: 0; margin: 0; display: flex; flex-direction: column; gap: .6rem; }
ol.conversation .entry { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; max-width: 60rem; }
ol.conversation .entry h3 { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; }
ol.conversation .entry .when { margin-left: auto; font: .75rem var(--mono); color: var(--muted); font-weight: 400; }
ol.conversation .entry-input, ol.conversation .entry-message { border-left: 4px solid #5b8fd1; align-self: flex-end; width: min(100%, 48rem); background: #eef4fb; }
ol.conversation .entry-turn { border-left: 4px solid #e39b3b; }
ol.conversation .entry-turn.abandoned { opacity: .65; border-style: dashed; }
ol.conversation .entry-turn.failed { border-left-color: var(--err); }
ol.conversation .entry-tool { border-left: 4px solid #3aa370; margin-left: 1.5rem; font-size: .92rem; }
ol.conversation .entry-attention { background: var(--person); border-color: var(--person-line); }
ol.conversation .entry-end { border-left: 4px solid var(--ok); }
ol.conversation .policy { font-size: .75rem; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; font-weight: 400; }
ol.conversation .badge.running { background: #e3eefb; color: var(--accent); }
ol.conversation .badge.person { background: var(--person); color: var(--warn); }
.say { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; font-family: inherit; font-size: inherit; }
.say.streaming { border-right: 2px solid var(--accent); padding-right: .2rem; }
.said .label, .meta { display: block; color: var(--muted); font-size: .85rem; margin: .2rem 0; }
.load-status { font-size: .85rem; color: var(--muted); }
.load-status.ok { color: var(--ok); }
.load-status.error { color: var(--err); }
ul.attachments { margin: .3rem 0; padding-left: 1.2rem; }
.result-error pre { border-color: var(--err); }
.approval { border: 1px dashed var(--person-line); border-radius: 6px; padding: .2rem .6rem; margin: .3rem 0; }
.approval p { margin: .3rem 0; }
.waterfall-scroll { overflow-x: auto; }
svg.waterfall-svg { min-width: 640px; }
svg .wf-label { font: 11px var(--mono); fill: var(--fg); }
svg .wf-label.step { font-weight: 700; }
svg .wf-bar.step, .key-step { fill: #8a97a8; background: #8a97a8; }
svg .wf-bar.model, .key-model { fill: #e39b3b; background: #e39b3b; }
svg .wf-bar.tool, svg .wf-bar.op, .key-tool { fill: #3aa370; background: #3aa370; }
svg .wf-bar.wait, svg .wf-bar.child, .key-wait { fill: #9b7fd1; background: #9b7fd1; }
svg .wf-child-link { cursor: pointer; }
svg .wf-bar.open { fill-opacity: .35; stroke: var(--warn); stroke-dasharray: 4 3; }
svg .wf-bar.failed { fill: var(--err); }
svg .wf-bar.retry { stroke: var(--fg); stroke-width: 1.5; stroke-dasharray: 2 2; }
svg .wf-gap { fill: #c9d6e6; fill-opacity: .35; }
svg .wf-row:focus { outline: none; }
svg .wf-row:focus rect, svg .wf-row:hover rect { stroke: var(--accent); stroke-width: 2; }
@media (max-width: 720px) {
  main { padding: .6rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dt { margin-top: .4rem; }
  table.timeline td.details { min-width: 16rem; }
}
`;
