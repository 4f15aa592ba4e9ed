import type { Accepted } from './api.js';
import { errorText } from './api.js';
import { h } from './dom.js';
import { checkSchema, formFields, type FormField, type JsonSchema, type SchemaIssue } from './json-schema.js';
import { pretty } from './format.js';

/** An id for one request a person makes (a message, a fork): repeating the request repeats the id. */
export function newRequestId(prefix: string): string {
  const random = crypto.getRandomValues(new Uint8Array(9));
  return `${prefix}-${[...random]
    .map((b) => b.toString(36).padStart(2, '0'))
    .join('')
    .slice(0, 14)}`;
}

export type Read = { ok: true; value: unknown } | { ok: false };

function issueList(issues: SchemaIssue[], prefix: string): HTMLElement {
  return h(
    'ul',
    { class: 'issues' },
    ...issues.map((i) => h('li', {}, `${i.path ? `${prefix}${i.path}` : prefix.replace(/\.$/, '') || 'value'}: ${i.message}`)),
  );
}

/**
 * A button that first says what the action will do (and shows what will be sent), then sends on
 * "Send". While the request is in flight its button is disabled (a double click sends once); the
 * answer replaces the confirmation: accepted, or the API's refusal with each bad field.
 */
export class ActionForm {
  readonly button: HTMLButtonElement;
  readonly box = h('div', { class: 'confirm', role: 'group', hidden: true });
  private inFlight = false;

  constructor(
    private readonly label: string,
    describe: () => { text: string; preview?: string } | undefined,
    private readonly send: () => Promise<Accepted>,
    private readonly onSent: (accepted: Accepted) => void,
  ) {
    this.box.setAttribute('aria-label', `confirm: ${label}`);
    this.button = h('button', { type: 'button' }, `${label}…`);
    this.button.addEventListener('click', () => {
      const plan = describe();
      if (!plan) return;
      const sendButton = h('button', { type: 'button', class: 'danger' }, `Send: ${label}`);
      const back = h('button', { type: 'button', class: 'secondary' }, 'Back');
      this.box.replaceChildren(h('p', {}, plan.text), plan.preview === undefined ? '' : h('pre', { class: 'json' }, plan.preview), sendButton, back);
      this.box.hidden = false;
      back.addEventListener('click', () => {
        this.box.hidden = true;
        this.button.focus();
      });
      sendButton.addEventListener('click', () => void this.go(sendButton, back));
      sendButton.focus();
    });
  }

  private async go(sendButton: HTMLButtonElement, back: HTMLButtonElement): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    sendButton.disabled = true;
    back.disabled = true;
    this.button.disabled = true;
    sendButton.textContent = 'Sending…';
    try {
      const accepted = await this.send();
      this.box.replaceChildren(
        h(
          'p',
          { class: 'ok', role: 'status' },
          `Sent: ${this.label} (${accepted.inboxId}). The outcome appears under "Your actions" when the worker records it.`,
        ),
      );
      this.onSent(accepted);
    } catch (error) {
      const again = h('button', { type: 'button', class: 'secondary' }, 'Back');
      again.addEventListener('click', () => {
        this.box.hidden = true;
        this.button.focus();
      });
      this.box.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Refused: ${errorText(error)}`), again);
      this.button.disabled = false;
    } finally {
      this.inFlight = false;
    }
  }
}

/** A JSON text field checked in the page: its parse error or each schema issue, listed by path. */
export class JsonField {
  readonly el: HTMLElement;
  readonly area: HTMLTextAreaElement;
  private readonly errors: HTMLElement;

  constructor(id: string, label: string, initial: string, rows = 4) {
    this.area = h('textarea', { id, rows, spellcheck: 'false', 'aria-describedby': `${id}-errors` });
    this.area.value = initial;
    this.errors = h('div', { id: `${id}-errors`, class: 'error', role: 'alert' });
    this.el = h('div', { class: 'json-field' }, h('label', { for: id }, label), this.area, this.errors);
  }

  focus(): void {
    this.area.focus();
  }

  fail(issues: SchemaIssue[], prefix = ''): void {
    this.errors.replaceChildren(h('p', {}, 'Not sent: fix these first.'), issueList(issues, prefix));
    this.area.setAttribute('aria-invalid', 'true');
    this.area.focus();
  }

  /** The value, or the problems shown and nothing to send. */
  read(schema?: JsonSchema): Read {
    this.errors.replaceChildren();
    this.area.removeAttribute('aria-invalid');
    let value: unknown;
    try {
      value = JSON.parse(this.area.value);
    } catch (e) {
      this.fail([{ path: '', message: `not JSON (${(e as Error).message})` }]);
      return { ok: false };
    }
    const issues = schema ? checkSchema(schema, value) : [];
    if (issues.length > 0) {
      this.fail(issues);
      return { ok: false };
    }
    return { ok: true, value };
  }
}

interface Input {
  field: FormField;
  el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
}

/**
 * A form made from a JSON Schema: one input per property of an object (text, number, checkbox,
 * choice, or JSON for anything nested), with a raw JSON editor as the fallback for any schema
 * (and the only editor for a schema that is not an object with properties). The value is checked
 * against the schema before it is given out.
 */
export class SchemaForm {
  readonly el: HTMLElement;
  private readonly inputs: Input[] = [];
  private readonly raw: JsonField;
  private readonly rawToggle: HTMLInputElement;
  private readonly fieldset: HTMLElement;
  private readonly errors: HTMLElement;

  constructor(
    id: string,
    private readonly schema: JsonSchema,
  ) {
    const fields = formFields(schema);
    this.errors = h('div', { class: 'error', role: 'alert', id: `${id}-errors` });
    this.fieldset = h('div', { class: 'schema-form' });
    for (const f of fields ?? []) this.fieldset.append(this.input(id, f));
    this.raw = new JsonField(`${id}-raw`, 'Payload (JSON)', fields ? '{}' : 'null', 5);
    this.rawToggle = h('input', { type: 'checkbox', id: `${id}-raw-toggle` });
    const rawBox = h('div', { hidden: fields !== undefined }, this.raw.el);
    this.rawToggle.checked = fields === undefined;
    this.rawToggle.disabled = fields === undefined;
    this.rawToggle.addEventListener('change', () => {
      if (this.rawToggle.checked) {
        // Carry over what the form holds so far.
        const v = this.collect();
        this.raw.area.value = pretty(v.ok ? v.value : {});
      }
      rawBox.hidden = !this.rawToggle.checked;
      this.fieldset.hidden = this.rawToggle.checked;
    });
    this.el = h(
      'div',
      { class: 'schema-form-box' },
      this.fieldset,
      h('p', {}, this.rawToggle, ' ', h('label', { for: this.rawToggle.id }, 'Write the payload as raw JSON')),
      rawBox,
      this.errors,
    );
  }

  private input(id: string, f: FormField): HTMLElement {
    const inputId = `${id}-f-${f.name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    let el: Input['el'];
    switch (f.field.kind) {
      case 'string':
        el = h('input', { id: inputId, type: 'text', autocomplete: 'off', spellcheck: 'false' });
        break;
      case 'number':
        el = h('input', { id: inputId, type: 'number', step: f.field.integer ? '1' : 'any' });
        break;
      case 'boolean':
        el = h('input', { id: inputId, type: 'checkbox' });
        break;
      case 'enum':
        el = h(
          'select',
          { id: inputId },
          h('option', { value: '' }, f.required ? '(choose one)' : '(none)'),
          ...f.field.options.map((o, i) => h('option', { value: String(i) }, typeof o === 'string' ? o : JSON.stringify(o))),
        );
        break;
      default:
        el = h('textarea', { id: inputId, rows: 3, spellcheck: 'false', placeholder: 'JSON' });
    }
    this.inputs.push({ field: f, el });
    const label = h('label', { for: inputId }, f.name, f.required ? '' : ' (optional)', f.field.kind === 'json' ? ' (JSON)' : '');
    return h(
      'div',
      { class: `field field-${f.field.kind}` },
      f.field.kind === 'boolean' ? h('p', {}, el, ' ', label) : h('div', {}, label, el),
      f.description ? h('p', { class: 'muted' }, f.description) : '',
    );
  }

  /** The form's value as JSON, with the fields that are not JSON named. */
  private collect(): Read & { issues?: SchemaIssue[] } {
    const value: Record<string, unknown> = {};
    const issues: SchemaIssue[] = [];
    for (const { field: f, el } of this.inputs) {
      const text = el.value;
      switch (f.field.kind) {
        case 'boolean':
          value[f.name] = (el as HTMLInputElement).checked;
          break;
        case 'number':
          if (text.trim() !== '') value[f.name] = Number(text);
          break;
        case 'enum':
          if (text !== '') value[f.name] = f.field.options[Number(text)];
          break;
        case 'string':
          if (text !== '' || f.required) value[f.name] = text;
          break;
        default:
          if (text.trim() === '') break;
          try {
            value[f.name] = JSON.parse(text);
          } catch (e) {
            issues.push({ path: f.name, message: `not JSON (${(e as Error).message})` });
          }
      }
    }
    return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
  }

  /** The payload, checked against the schema; or each problem shown beside its field, nothing to send. */
  read(): Read {
    this.errors.replaceChildren();
    for (const { el } of this.inputs) el.removeAttribute('aria-invalid');
    if (this.rawToggle.checked) return this.raw.read(this.schema);
    const collected = this.collect();
    const issues = collected.ok ? checkSchema(this.schema, collected.value) : (collected.issues ?? []);
    if (issues.length === 0 && collected.ok) return collected;
    this.errors.replaceChildren(h('p', {}, 'Not sent: fix these first.'), issueList(issues, ''));
    let first: Input['el'] | undefined;
    for (const issue of issues) {
      const name = issue.path.split('.')[0];
      const input = this.inputs.find((i) => i.field.name === name);
      if (!input) continue;
      input.el.setAttribute('aria-invalid', 'true');
      first ??= input.el;
    }
    first?.focus();
    return { ok: false };
  }
}
