import type { Redactor } from './redaction.js';

export interface StreamRedactorOptions {
  /**
   * Characters at the end of the text never released before the end: with the word they fall in,
   * the part that could still turn into (part of) a secret when the next delta lands (a card
   * number's last group, a key header, an `@` after a URL's password).
   */
  holdChars?: number;
  /** Characters before the window kept as context, so a secret right after a cut keeps its key name. */
  contextChars?: number;
  /** A window longer than this may move on at a space when no line ends in it (a long line). */
  longWindowChars?: number;
}

const SPACE = /\s/;
/** An unfinished private key block (its header seen, its footer not yet): nothing in it is ever released raw. */
const OPEN_KEY_BLOCK = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?![\s\S]*-----END )/;

/**
 * Redacts a text that arrives in pieces (a model call's streamed deltas) so that nothing released
 * holds a secret the redactor would find in the whole text, a secret split across two deltas or
 * two releases included, and everything released is final: a release never has to be taken back.
 *
 * How: the text since the last safe cut (the window) is redacted whole at each release, with the
 * context before it, and only a prefix of that redaction is released: the part before the last
 * `holdChars` characters and the word they start in (the tail that could still become a secret),
 * and only if that prefix is also how the window's redaction begins now (no match runs across the
 * cut). The window then moves on at a line end (or a space, on a long line) outside any unfinished
 * key block, so each release costs the length of a window, not of the whole text. When a new
 * delta changes how text already released redacts (a pattern that needs text from before the
 * context), `take` answers undefined: the stream ends there, and the log's response has the rest.
 */
export class StreamRedactor {
  private window = '';
  /** The redaction of the window already released. */
  private released = '';
  /** Raw text just before the window (its redaction is `contextOut`). */
  private context = '';
  private contextOut = '';
  /** Where the window's last word starts (after its last whitespace), so a release never rescans a long word. */
  private wordStart = 0;
  /** The raw length up to which the window was released last time: nothing new before it, no work. */
  private lastCut = 0;
  private readonly hold: number;
  private readonly contextChars: number;
  private readonly longWindow: number;

  constructor(
    private readonly redactor: Redactor,
    options: StreamRedactorOptions = {},
  ) {
    this.hold = options.holdChars ?? 64;
    this.contextChars = options.contextChars ?? 256;
    this.longWindow = options.longWindowChars ?? 8_192;
  }

  push(delta: string): void {
    for (let i = delta.length - 1; i >= 0; i--) {
      if (SPACE.test(delta[i]!)) {
        this.wordStart = this.window.length + i + 1;
        break;
      }
    }
    this.window += delta;
  }

  /**
   * The redacted text that may be released now, after what was released before ('' when all of
   * it is still held); `final`: the text is complete, release all of it. Undefined: nothing more
   * can be released consistently; stop.
   */
  take(final: boolean): string | undefined {
    const w = this.window;
    let cut = final ? w.length : this.holdPoint(w);
    if (cut <= this.lastCut && !final) return '';
    let out = this.redactFrom(w.slice(0, cut));
    if (!final && out !== undefined) {
      // A match that runs across the cut (the rest of it is already here): release up to its start instead.
      const whole = this.redactFrom(w);
      while (out !== undefined && whole !== undefined && !whole.startsWith(out) && cut > this.lastCut) {
        cut = this.previousSpace(w, cut);
        out = this.redactFrom(w.slice(0, cut));
      }
      if (whole === undefined || out === undefined || !whole.startsWith(out)) return whole === undefined ? undefined : '';
    }
    if (out === undefined || !out.startsWith(this.released)) return undefined;
    const fresh = out.slice(this.released.length);
    this.released = out;
    this.lastCut = cut;
    this.advance(w, cut);
    return fresh;
  }

  /** The window's text as redacted after its context, or undefined when it changes how the context redacts. */
  private redactFrom(text: string): string | undefined {
    if (this.context === '') return this.redactor.preview(text);
    const all = this.redactor.preview(this.context + text);
    return all.startsWith(this.contextOut) ? all.slice(this.contextOut.length) : undefined;
  }

  /** Where the held tail starts: `hold` characters from the end, back to the start of their word. */
  private holdPoint(w: string): number {
    const at = w.length - this.hold;
    if (at <= 0) return 0;
    if (at >= this.wordStart) return this.wordStart;
    let cut = at;
    while (cut > 0 && !SPACE.test(w[cut - 1]!)) cut--;
    return cut;
  }

  private previousSpace(w: string, from: number): number {
    let cut = from - 1;
    while (cut > 0 && !SPACE.test(w[cut - 1]!)) cut--;
    return Math.max(cut, 0);
  }

  /**
   * Move the window on to the last line end before `cut` (or space, on a long line) that is not
   * inside an unfinished key block, when the text before it redacts to exactly what was released.
   */
  private advance(w: string, cut: number): void {
    const line = w.lastIndexOf('\n', cut - 1) + 1;
    let at = line > 0 ? line : cut > this.longWindow ? this.previousSpace(w, cut) : 0;
    if (at <= 0) return;
    const open = OPEN_KEY_BLOCK.exec(w.slice(0, at));
    if (open) at = w.lastIndexOf('\n', open.index - 1) + 1;
    if (at <= 0) return;
    const head = this.redactFrom(w.slice(0, at));
    if (head === undefined || !this.released.startsWith(head)) return;
    const context = (this.context + w.slice(0, at)).slice(-this.contextChars);
    const contextOut = this.redactor.preview(context);
    // What is released after the cut must read the same after the new context, or the window stays.
    const rest = this.redactor.preview(context + w.slice(at, cut));
    if (rest !== contextOut + this.released.slice(head.length)) return;
    this.context = context;
    this.contextOut = contextOut;
    this.window = w.slice(at);
    this.released = this.released.slice(head.length);
    this.wordStart = Math.max(0, this.wordStart - at);
    this.lastCut -= at;
  }
}
