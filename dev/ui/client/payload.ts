import { blob, errorText } from './api.js';
import { sha256Hex } from './digest.js';
import { h } from './dom.js';
import { bytes, plural, pretty, short } from './format.js';
import { isBody, type Body, type LogEvent } from './types.js';
import { attachmentList } from './attachments.js';

/** The bodies an event carries, with a label for each. */
export function bodiesOf(e: LogEvent): [string, Body][] {
  const out: [string, Body][] = [];
  const add = (label: string, value: unknown) => {
    if (isBody(value)) out.push([label, value]);
  };
  switch (e.type) {
    case 'run_started':
      add('input', e.input);
      add('system prompt', (e.prompt as { text?: unknown } | undefined)?.text);
      break;
    case 'model_response':
      add('text', e.text);
      for (const c of (e.calls as { callId?: string; name?: string; args?: unknown }[] | undefined) ?? []) add(`arguments of ${c.name ?? '?'} (${c.callId ?? '?'})`, c.args);
      break;
    case 'tool_result':
      add('output', e.output);
      break;
    case 'attention_resolved':
      add('result', e.result);
      break;
    case 'user_message':
      add('message', e.input);
      break;
    case 'run_completed':
      add('answer', e.answer);
      break;
    default:
  }
  return out;
}

/** An inline body pretty-printed, as text. */
function inlineView(label: string, value: unknown): HTMLElement {
  const text = pretty(value);
  return h(
    'details',
    { class: 'payload' },
    h('summary', {}, `${label} `, h('span', { class: 'muted' }, `inline, ${plural(text.length, 'char')}`)),
    h('pre', { class: 'json', tabindex: '0' }, text),
    attachmentList(value),
  );
}

/**
 * A body stored in S3: its summary at once, the whole of it on demand through the API. The bytes
 * are hashed in the page and shown only when they match the sha256 the log recorded.
 */
function blobView(runId: string, label: string, body: Extract<Body, { kind: 'blob' }>): HTMLElement {
  const pre = h('pre', { class: 'json', tabindex: '0', hidden: true });
  const status = h('p', { class: 'blob-status', role: 'status' });
  const button = h('button', { type: 'button', class: 'secondary' }, 'Fetch it and check its sha256');
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = 'Fetching…';
    status.className = 'blob-status';
    try {
      const data = await blob(runId, body.sha256);
      const actual = await sha256Hex(data);
      if (actual !== body.sha256) {
        status.textContent = `sha256 mismatch: the log recorded ${short(body.sha256)}, the bytes hash to ${short(actual)}. Not shown.`;
        status.className = 'blob-status error';
        button.disabled = false;
        return;
      }
      const text = new TextDecoder().decode(data);
      let value: unknown = text;
      try {
        value = JSON.parse(text) as unknown;
      } catch {
        // Stored bodies are JSON; show the text as it is if one is not.
      }
      pre.textContent = pretty(value);
      pre.hidden = false;
      status.textContent = `sha256 verified (${bytes(data.byteLength)}).`;
      status.className = 'blob-status ok';
      button.remove();
    } catch (error) {
      status.textContent = `Could not fetch it: ${errorText(error)}`;
      status.className = 'blob-status error';
      button.disabled = false;
    }
  });
  return h(
    'details',
    { class: 'payload' },
    h('summary', {}, `${label} `, h('span', { class: 'muted' }, `in S3, ${bytes(body.size)}, sha256 ${short(body.sha256)}`)),
    h('p', { class: 'muted' }, 'Summary: '),
    h('pre', { class: 'json summary' }, body.summary),
    button,
    status,
    pre,
  );
}

export function bodyView(runId: string, label: string, body: Body): HTMLElement {
  return body.kind === 'inline' ? inlineView(label, body.value) : blobView(runId, label, body);
}

/** The whole event as stored, for whoever needs a field the columns do not show. */
export function rawEventView(e: LogEvent): HTMLElement {
  return h('details', { class: 'payload raw' }, h('summary', {}, 'event JSON'), h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(e, null, 2)));
}
