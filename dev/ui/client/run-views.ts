import { Conversation } from './conversation.js';
import { ConversationView } from './conversation-view.js';
import { h } from './dom.js';
import type { StreamItem } from './stream-feed.js';
import type { Timeline } from './timeline.js';
import { WaterfallView } from './waterfall-view.js';

const TABS = [
  { id: 'conversation', label: 'Conversation' },
  { id: 'waterfall', label: 'Waterfall' },
  { id: 'events', label: 'Events' },
] as const;
type TabId = (typeof TABS)[number]['id'];

/**
 * Three ways to read the run, as tabs: the conversation (what was said and done, live while the
 * model writes), the waterfall (when), and the timeline of every event (exactly what the log
 * holds). Each stream item is applied to all three once; the tab shown is kept in the URL's hash.
 */
export class RunViews {
  readonly el: HTMLElement;
  readonly conversation = new Conversation();
  private readonly conversationView: ConversationView;
  readonly waterfall = new WaterfallView();
  private readonly tabs = new Map<TabId, { tab: HTMLButtonElement; panel: HTMLElement }>();
  private readonly live = h('p', { class: 'streaming-note muted', role: 'status' });

  constructor(
    runId: string,
    private readonly timeline: Timeline,
  ) {
    this.conversationView = new ConversationView(runId, this.conversation);
    const panels: Record<TabId, HTMLElement> = {
      conversation: h('div', {}, this.conversationView.el, this.live),
      waterfall: this.waterfall.el,
      events: timeline.el,
    };
    const list = h('div', { role: 'tablist', 'aria-label': 'Views of the run', class: 'tabs' });
    for (const { id, label } of TABS) {
      const tab = h('button', { type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `panel-${id}`, class: 'tab' }, label);
      tab.addEventListener('click', () => this.select(id, true));
      tab.addEventListener('keydown', (event) => this.arrow(event, id));
      const panel = h('div', { role: 'tabpanel', id: `panel-${id}`, 'aria-labelledby': `tab-${id}`, tabindex: '0' }, panels[id]);
      list.append(tab);
      this.tabs.set(id, { tab, panel });
    }
    this.el = h('section', { class: 'run-views', 'aria-label': 'the run' }, list, ...[...this.tabs.values()].map((t) => t.panel));
    const fromHash = TABS.find((t) => `#${t.id}` === location.hash)?.id;
    this.select(fromHash ?? 'conversation', false);
  }

  select(id: TabId, focus: boolean): void {
    for (const [tabId, { tab, panel }] of this.tabs) {
      const on = tabId === id;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      panel.hidden = !on;
      if (on && focus) tab.focus();
    }
    this.waterfall.show(id === 'waterfall');
    if (focus) history.replaceState(null, '', `#${id}`);
  }

  /** Arrow keys, Home and End move between tabs (the WAI-ARIA tabs pattern). */
  private arrow(event: KeyboardEvent, id: TabId): void {
    const i = TABS.findIndex((t) => t.id === id);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    this.select(TABS[(to + TABS.length) % TABS.length]?.id ?? id, true);
  }

  /** Apply stream items in order: events to the timeline (which folds the run model), all three views. */
  apply(items: StreamItem[]): void {
    const events = items.flatMap((i) => (i.type === 'event' ? [i.event] : []));
    if (events.length > 0) this.timeline.add(events);
    const changed: string[] = [];
    for (const item of items) {
      const id =
        item.type === 'event' ? this.conversation.apply(item.event) : item.type === 'text' ? this.conversation.text(item) : this.conversation.discard(item);
      if (Array.isArray(id)) changed.push(...id);
      else if (id) changed.push(id);
    }
    this.conversationView.update(changed);
    this.waterfall.add(events);
  }

  /** Once a second from the page: open waterfall bars grow. */
  tick(): void {
    this.waterfall.tick();
  }

  /** Say whether the page gets the streamed text or only the log. */
  streaming(mode: 'stream' | 'events'): void {
    this.live.textContent = mode === 'stream' ? '' : 'This API has no run stream: the conversation shows each answer once it is in the log.';
  }
}
