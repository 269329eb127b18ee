/**
 * Questions about the set of known patches: what is pending, where, what went stale.
 * Pure, no `vscode` import: the editor side and the unit tests share it.
 */

import type { HunkStatus, Patch, PatchFile, ValidationCheck } from '../protocol';
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

/** How many hunks of the patch are still to be decided. */
export function pendingHunks(patch: Patch): number {
  return patch.files.reduce((n, f) => n + f.hunks.filter((h) => h.status === 'pending').length, 0);
}

/** "1 of 2 hunks accepted · 1 pending" for a patch whose hunks were decided apart; else "". */
export function hunkSummary(patch: Patch): string {
  const counts = new Map<string, number>();
  let total = 0;
  for (const file of patch.files) {
    for (const hunk of file.hunks) {
      counts.set(hunk.status, (counts.get(hunk.status) ?? 0) + 1);
      total += 1;
    }
  }
  if (total < 2 || counts.size < 2) {
    return '';
  }
  const order = ['accepted', 'rejected', 'stale', 'failed', 'pending'];
  return order
    .filter((status) => counts.has(status))
    .map((status) => `${counts.get(status)} ${status}`)
    .join(' · ')
    .replace(/^/, `${total} hunks: `);
}

/** The status bar's text, or undefined when nothing is pending. */
export function statusBarText(patches: PatchMap): string | undefined {
  const pending = pendingPatches(patches);
  if (pending.length === 0) {
    return undefined;
  }
  const hunks = pending.reduce((n, p) => n + pendingHunks(p), 0);
  const text = `$(git-pull-request) ${pending.length} agent patch${pending.length === 1 ? '' : 'es'}`;
  return hunks > pending.length ? `${text} (${hunks} hunks)` : text;
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

/** The hunks in one document whose status is one of `statuses` (default: the pending ones). */
export function hunksIn(patches: PatchMap, uri: string, statuses: HunkStatus[] = ['pending']): HunkView[] {
  const views: HunkView[] = [];
  for (const patch of Object.values(patches)) {
    for (const view of hunkViews(patch, statuses)) {
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
  for (const view of hunkViews(patch, ['pending', 'accepted', 'rejected', 'stale', 'failed'])) {
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

/** What the user reads when hunks of a patch were stale on accept (the others were written). */
export function staleHunksExplanation(patch: Patch, hunks: number[]): string {
  const which = hunks.length === 1 ? `hunk ${hunks[0] + 1}` : `hunks ${hunks.map((h) => h + 1).join(', ')}`;
  const one = hunks.length === 1;
  return `${which} of the agent's patch "${patch.summary}" no longer applied: ${one ? 'its' : 'their'} lines changed since it was proposed. Nothing was written for ${one ? 'it' : 'them'}.`;
}

/** How a check of a patch's validation is shown: a failure the patch did not cause (the same
 *  command fails without it) is not the patch's, and says so instead of a red cross. */
export function checkVerdict(check: ValidationCheck): { kind: 'passed' | 'failed' | 'preexisting'; mark: string } {
  if (check.passed) {
    return { kind: 'passed', mark: '✓' };
  }
  if (check.fails_without_patch) {
    return { kind: 'preexisting', mark: '✗ (fails without the patch too)' };
  }
  return { kind: 'failed', mark: '✗' };
}
