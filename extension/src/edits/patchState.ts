/**
 * Questions about the set of known patches: what is pending, where, what went stale.
 * Pure, no `vscode` import: the editor side and the unit tests share it.
 */

import type { Patch, PatchFile } from '../protocol';
import { hunkViews, type HunkView } from './hunks';

export type PatchMap = Record<string, Patch>;

export function pendingPatches(patches: PatchMap): Patch[] {
  return Object.values(patches).filter((p) => p.status === 'pending');
}

export function pendingCount(patches: PatchMap): number {
  return pendingPatches(patches).length;
}

export function stalePatches(patches: PatchMap): Patch[] {
  return Object.values(patches).filter((p) => p.status === 'stale');
}

/** The status bar's text, or undefined when nothing is pending. */
export function statusBarText(patches: PatchMap): string | undefined {
  const count = pendingCount(patches);
  if (count === 0) {
    return undefined;
  }
  return `$(git-pull-request) ${count} agent patch${count === 1 ? '' : 'es'}`;
}

/** Compare document URIs as VS Code prints them and as the daemon builds them. */
export function sameUri(a: string, b: string): boolean {
  return normalizeUri(a) === normalizeUri(b);
}

export function normalizeUri(uri: string): string {
  try {
    return decodeURIComponent(uri).replace(/^file:\/\/\/([a-zA-Z]):/, (_m, d: string) => `file:///${d.toLowerCase()}:`);
  } catch {
    return uri;
  }
}

/** The hunks of pending (and, with `statuses`, other) patches in one document. */
export function hunksIn(patches: PatchMap, uri: string, statuses: Patch['status'][] = ['pending']): HunkView[] {
  const views: HunkView[] = [];
  for (const patch of Object.values(patches)) {
    if (!statuses.includes(patch.status)) {
      continue;
    }
    for (const view of hunkViews(patch)) {
      if (sameUri(view.uri, uri)) {
        views.push(view);
      }
    }
  }
  return views;
}

export function totalHunks(patch: Patch): number {
  return patch.files.reduce((n, f) => n + f.hunks.length, 0);
}

/** `+A −R`, from the daemon's counts or from the hunks. */
export function patchStats(patch: Patch): { added: number; removed: number } {
  if (typeof patch.added === 'number' && typeof patch.removed === 'number') {
    return { added: patch.added, removed: patch.removed };
  }
  let added = 0;
  let removed = 0;
  for (const view of hunkViews(patch)) {
    added += view.added;
    removed += view.removedCount;
  }
  return { added, removed };
}

export function filePath(file: PatchFile): string {
  if (file.path) {
    return file.path;
  }
  try {
    return decodeURIComponent(new URL(file.uri).pathname).split('/').pop() ?? file.uri;
  } catch {
    return file.uri;
  }
}

/** What the user reads about a stale patch, and what the agent is asked when they want it again. */
export function staleExplanation(patch: Patch): string {
  const files = patch.files.map(filePath).join(', ');
  const why = patch.statusReason ? ` (${patch.statusReason})` : '';
  return `The agent's patch "${patch.summary}" no longer applies: ${files} changed since it was proposed${why}. Nothing was written.`;
}

export function askAgainMessage(patch: Patch): string {
  const files = patch.files.map(filePath).join(', ');
  return `Your patch ${patch.id} ("${patch.summary}") is stale: ${files} changed since you proposed it, so nothing was written. Read the current text of ${files} again and propose the change again against it.`;
}

/**
 * Keeps what a document looked like when a pending patch was first seen in it. A buffer that
 * differs from that base means the patch would be stale on accept (the daemon compares the
 * whole text), and its line numbers no longer hold, so it is not drawn line by line.
 */
export class PatchBases {
  private readonly bases = new Map<string, string>();

  private key(patchId: string, uri: string): string {
    return `${patchId} ${normalizeUri(uri)}`;
  }

  /** Records `text` as the base the first time; answers whether `text` still equals the base. */
  matches(patchId: string, uri: string, text: string): boolean {
    const key = this.key(patchId, uri);
    const base = this.bases.get(key);
    if (base === undefined) {
      this.bases.set(key, text);
      return true;
    }
    return base === text;
  }

  base(patchId: string, uri: string): string | undefined {
    return this.bases.get(this.key(patchId, uri));
  }

  /** Forget patches no longer pending. */
  retain(pendingIds: Set<string>): void {
    for (const key of [...this.bases.keys()]) {
      if (!pendingIds.has(key.split(' ')[0])) {
        this.bases.delete(key);
      }
    }
  }
}
