/**
 * Where a chat's last response stopped, kept per chat id so that a page reload can replay the
 * message it was showing: the last cursor the client applied, the turn of its message, and
 * whether that message is finished (then there is nothing to reconnect to).
 */
export interface ChatPlace {
  cursor: string;
  /** Seq of the user turn the message answers (its id is `<runId>:<turn>`). */
  turn?: number;
  finished: boolean;
}

/** localStorage's shape: anything with getItem/setItem (sessionStorage, a Map wrapper, a server store). */
export interface ChatPlaceStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const KEY = (chatId: string) => `logbook-chat:${chatId}`;

/** The browser's localStorage when there is one (never throws: private modes refuse it). */
export function defaultStorage(): ChatPlaceStorage | undefined {
  try {
    const s = (globalThis as { localStorage?: ChatPlaceStorage }).localStorage;
    return s && typeof s.getItem === 'function' ? s : undefined;
  } catch {
    return undefined;
  }
}

export class ChatPlaces {
  private readonly memory = new Map<string, ChatPlace>();
  constructor(private readonly storage: ChatPlaceStorage | undefined) {}

  get(chatId: string): ChatPlace | undefined {
    const known = this.memory.get(chatId);
    if (known) return known;
    try {
      const raw = this.storage?.getItem(KEY(chatId));
      const parsed = raw ? (JSON.parse(raw) as ChatPlace) : undefined;
      if (parsed && typeof parsed.cursor === 'string') {
        this.memory.set(chatId, parsed);
        return parsed;
      }
    } catch {
      // unreadable: as if none
    }
    return undefined;
  }

  set(chatId: string, place: ChatPlace): void {
    this.memory.set(chatId, place);
    try {
      this.storage?.setItem(KEY(chatId), JSON.stringify(place));
    } catch {
      // full or refused: the memory copy still serves this page
    }
  }
}
