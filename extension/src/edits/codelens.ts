/**
 * "Accept | Reject | Diff" above every proposed hunk; "Accept this hunk" when a patch has
 * several; and, for a patch whose file changed since (or that the daemon found stale), what
 * happened and "Ask the agent again".
 */

import * as vscode from 'vscode';
import type { ChatStore } from '../chat/store';
import { hunkViews, lensLine } from './hunks';
import type { InlineDiffs } from './decorations';
import { hunksIn, patchStats, sameUri, totalHunks } from './patchState';
import { COMMANDS } from '../commands/ids';

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

  /** Hide a stale patch's lens. */
  dismiss(patchId: string): void {
    this.dismissed.add(patchId);
    this.emitter.fire();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const patches = this.store.state.patches;
    const uri = document.uri.toString();
    const lenses: vscode.CodeLens[] = [];
    const at = (line: number) => new vscode.Range(line, 0, line, 0);
    const seen = new Set<string>();
    for (const view of hunksIn(patches, uri, ['pending', 'stale'])) {
      const patch = patches[view.patchId];
      if (!patch || this.dismissed.has(patch.id)) {
        continue;
      }
      const range = at(lensLine(view, document.lineCount));
      const firstInFile = !seen.has(patch.id);
      seen.add(patch.id);
      const changed = patch.status === 'stale' || !this.diffs.matchesBase(patch.id, document);
      if (changed) {
        if (!firstInFile) {
          continue;
        }
        const what = patch.status === 'stale' ? 'Stale agent patch' : 'This file changed since the agent proposed this patch';
        lenses.push(
          new vscode.CodeLens(range, { title: `$(warning) ${what}: ${patch.summary}`, command: COMMANDS.showPatchDiff, arguments: [patch.id, view.fileIndex], tooltip: 'Accepting it would write nothing: the text it was made against is gone.' }),
          new vscode.CodeLens(range, { title: 'Ask the agent again', command: COMMANDS.askAgain, arguments: [patch.id] }),
        );
        lenses.push(
          patch.status === 'stale'
            ? new vscode.CodeLens(range, { title: 'Dismiss', command: COMMANDS.dismissPatch, arguments: [patch.id] })
            : new vscode.CodeLens(range, { title: 'Reject', command: COMMANDS.rejectPatch, arguments: [patch.id] }),
        );
        continue;
      }
      const hunks = totalHunks(patch);
      const { added, removed } = patchStats(patch);
      if (firstInFile) {
        lenses.push(
          new vscode.CodeLens(range, {
            title: `$(sparkle) Agent: ${patch.summary} (+${added} −${removed})`,
            command: COMMANDS.showPatchDiff,
            arguments: [patch.id, view.fileIndex],
            tooltip: 'Open the proposed change as a diff',
          }),
        );
      }
      lenses.push(
        new vscode.CodeLens(range, {
          title: hunks > 1 ? `$(check) Accept all ${hunks}` : '$(check) Accept',
          command: COMMANDS.acceptPatch,
          arguments: [patch.id],
          tooltip: hunks > 1 ? `Accept the whole patch (${hunks} hunks)` : 'Accept the agent patch',
        }),
      );
      if (hunks > 1) {
        lenses.push(
          new vscode.CodeLens(range, {
            title: 'Accept this hunk',
            command: COMMANDS.acceptPatch,
            arguments: [patch.id, [view.index]],
            tooltip: 'Apply only this hunk; the rest of the patch is dropped',
          }),
        );
      }
      lenses.push(
        new vscode.CodeLens(range, { title: '$(close) Reject', command: COMMANDS.rejectPatch, arguments: [patch.id], tooltip: 'Reject the agent patch: nothing changes' }),
        new vscode.CodeLens(range, { title: '$(diff) Diff', command: COMMANDS.showPatchDiff, arguments: [patch.id, view.fileIndex], tooltip: 'Open the proposed file side by side' }),
      );
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
