/**
 * The only way the inspector builds DOM. Text goes in as text nodes, never as markup: payloads are
 * model and tool output, attacker-controlled, and nothing here parses a string as HTML (the page's
 * Trusted Types policy would refuse it anyway). Event handlers are functions, never attribute text.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined | EventListener>;

function apply(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      if (!name.startsWith('on')) throw new Error(`handler for ${name} must be an on* attribute`);
      el.addEventListener(name.slice(2), value);
      continue;
    }
    // Inline handlers and styles are refused by the CSP; refuse them here so a mistake is loud.
    if (name.startsWith('on') || name === 'style') throw new Error(`attribute ${name} is not allowed`);
    el.setAttribute(name, value === true ? '' : String(value));
  }
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** An HTML element with attributes and text or element children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element, the same way. */
export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** Replace an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing`);
  return el as T;
}
