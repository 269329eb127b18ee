/**
 * "Accept | Reject | Diff" above every pending hunk, deciding that hunk alone (the patch's other
 * hunks stay drawn and actionable); "Accept all N | Reject all" once per patch and file when it
 * has several pending hunks. A file edited since (its text is not the patch's base) gets one
 * warning lens with "Accept what still applies"; a stale hunk says so and offers to ask again.
 */

import * as vscode from 'vscode';
import type { ChatStore } from '../chat/store';
import { hunkViews, lensLine, type HunkView } from './hunks';
import type { InlineDiffs } from './decorations';
import { hunksIn, patchStats, pendingHunks, sameUri } from './patchState';
import { COMMANDS } from '../commands/ids';
import type { Patch } from '../protocol';
import { visible } from '../visible';

/** A patch's summary as a lens title may show it: nothing invisible, no line break. */
function summaryOf(patch: Patch): string {
  return visible(patch.summary, { breaks: true }).replaceAll('\n', ' ');
}

/** The lenses of one pending hunk of `patch` whose file still holds the base text. */
export function hunkLenses(patch: Patch, view: HunkView, firstInFile: boolean): vscode.Command[] {
  const pending = pendingHunks(patch);
  const only = pending > 1 ? [[view.hunkId]] : [];
  const commands: vscode.Command[] = [];
  if (firstInFile) {
    const { added, removed } = patchStats(patch);
    commands.push({ title: `$(sparkle) Agent: ${summaryOf(patch)} (+${added} −${removed})`, command: COMMANDS.showPatchDiff, arguments: [patch.id, view.fileIndex], tooltip: 'Open the proposed change as a diff' });
  }
  commands.push(
    { title: '$(check) Accept', command: COMMANDS.acceptPatch, arguments: [patch.id, ...only], tooltip: pending > 1 ? 'Apply this hunk only; the others stay pending' : 'Accept the agent patch' },
    { title: '$(close) Reject', command: COMMANDS.rejectPatch, arguments: [patch.id, ...only], tooltip: pending > 1 ? 'Drop this hunk only; nothing changes on disk' : 'Reject the agent patch: nothing changes' },
  );
  if (pending > 1 && firstInFile) {
    commands.push(
      { title: `Accept all ${pending}`, command: COMMANDS.acceptPatch, arguments: [patch.id], tooltip: `Apply every pending hunk (${pending})` },
      { title: 'Reject all', command: COMMANDS.rejectPatch, arguments: [patch.id], tooltip: 'Reject every pending hunk' },
    );
  }
  commands.push({ title: '$(diff) Diff', command: COMMANDS.showPatchDiff, arguments: [patch.id, view.fileIndex], tooltip: 'Open the proposed file side by side' });
  return commands;
}

/** The one warning lens of a patch whose file changed since (its hunks cannot be placed here). */
export function changedFileLenses(patch: Patch, view: HunkView): vscode.Command[] {
  return [
    { title: `$(warning) This file changed since the agent proposed this patch: ${summaryOf(patch)}`, command: COMMANDS.showPatchDiff, arguments: [patch.id, view.fileIndex], tooltip: 'Hunks whose lines changed will be stale; the others still apply.' },
    { title: 'Accept what still applies', command: COMMANDS.acceptPatch, arguments: [patch.id], tooltip: 'Write every hunk whose lines are still there; the others become stale' },
    { title: 'Reject', command: COMMANDS.rejectPatch, arguments: [patch.id] },
    { title: 'Ask the agent again', command: COMMANDS.askAgain, arguments: [patch.id] },
  ];
}

/** The lenses of a patch's stale hunk (its lines changed: nothing was written for it). */
export function staleLenses(patch: Patch, view: HunkView): vscode.Command[] {
  return [
    { title: `$(warning) Stale agent hunk: ${summaryOf(patch)}`, command: COMMANDS.showPatchDiff, arguments: [patch.id, view.fileIndex], tooltip: 'Its lines changed since it was proposed; nothing was written for it.' },
    { title: 'Ask the agent again', command: COMMANDS.askAgain, arguments: [patch.id] },
    { title: 'Dismiss', command: COMMANDS.dismissPatch, arguments: [patch.id] },
  ];
}

export class PatchCodeLenses implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.emitter.event;
  private readonly dismissed = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: ChatStore,
    private readonly diffs: InlineDiffs,
  ) {
    this.disposables.push(this.emitter, diffs.onDidRedraw(() => this.emitter.fire()));
  }

  /** Hide a patch's stale lenses. */
  dismiss(patchId: string): void {
    this.dismissed.add(patchId);
    this.emitter.fire();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const patches = this.store.state.patches;
    const lenses: vscode.CodeLens[] = [];
    const seen = new Set<string>();
    for (const view of hunksIn(patches, document.uri.toString(), ['pending', 'stale'])) {
      const patch = patches[view.patchId];
      if (!patch) {
        continue;
      }
      const range = new vscode.Range(lensLine(view, document.lineCount), 0, lensLine(view, document.lineCount), 0);
      const key = `${patch.id} ${view.status}`;
      const first = !seen.has(key);
      seen.add(key);
      let commands: vscode.Command[];
      if (view.status === 'stale') {
        commands = first && !this.dismissed.has(patch.id) ? staleLenses(patch, view) : [];
      } else if (!this.diffs.matchesBase(this.diffs.fileOf(view), document)) {
        commands = first ? changedFileLenses(patch, view) : [];
      } else {
        commands = hunkLenses(patch, view, first);
      }
      lenses.push(...commands.map((command) => new vscode.CodeLens(range, command)));
    }
    return lenses;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

/** The pending patch with a hunk on the cursor line of `editor`, if any. */
export function patchAtCursor(store: ChatStore, editor: vscode.TextEditor | undefined): string | undefined {
  if (!editor) {
    return undefined;
  }
  const line = editor.selection.active.line;
  for (const patch of Object.values(store.state.patches)) {
    if (patch.status !== 'pending') {
      continue;
    }
    for (const view of hunkViews(patch)) {
      if (!sameUri(view.uri, editor.document.uri.toString())) {
        continue;
      }
      const first = view.removed?.first ?? Math.max(0, view.anchorLine - 1);
      const last = view.removed?.last ?? view.anchorLine;
      if (line >= first && line <= last) {
        return patch.id;
      }
    }
  }
  return undefined;
}
