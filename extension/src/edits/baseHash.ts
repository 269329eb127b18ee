/**
 * Whether a buffer still holds the text a patch's hunk ranges are in: the daemon sends the
 * SHA-256 of that text (`baseHash`); a buffer with another hash is not drawn line by line.
 * Node only (the extension host), not for the webview.
 */

import { createHash } from 'node:crypto';
import type { PatchFile } from '../protocol';

export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Remembers the hash of each document version, so a redraw does not hash unchanged text. */
export class BaseHashes {
  private readonly seen = new Map<string, { version: number; hash: string }>();

  hash(uri: string, version: number, text: () => string): string {
    const known = this.seen.get(uri);
    if (known && known.version === version) {
      return known.hash;
    }
    const hash = textHash(text());
    this.seen.set(uri, { version, hash });
    return hash;
  }

  /** A file to create (no base) matches an empty or missing buffer. */
  matches(file: PatchFile, uri: string, version: number, text: () => string): boolean {
    if (file.baseHash === null || file.baseHash === undefined) {
      return text() === '';
    }
    return this.hash(uri, version, text) === file.baseHash;
  }

  forget(uri: string): void {
    this.seen.delete(uri);
  }
}
