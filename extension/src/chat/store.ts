/**
 * The host's copy of the chat state: actions go through `reduce`, listeners (the webview, the
 * inline diffs, the status bar) hear each one. No `vscode` import.
 */

import { reduce, type Action, type ChatState } from './state';

export type Listener = (action: Action, state: ChatState, previous: ChatState) => void;

export class ChatStore {
  private listeners = new Set<Listener>();

  constructor(private current: ChatState) {}

  get state(): ChatState {
    return this.current;
  }

  dispatch(action: Action): ChatState {
    const previous = this.current;
    this.current = reduce(previous, action);
    for (const listener of [...this.listeners]) {
      try {
        listener(action, this.current, previous);
      } catch (error) {
        console.error('smol-instruments: a chat listener failed', error);
      }
    }
    return this.current;
  }

  subscribe(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}

/** A short random id (conversation/session ids, turn ids, approval ids). */
export function newId(length = 12): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  for (const byte of bytes) {
    out += alphabet[byte % alphabet.length];
  }
  return out;
}
