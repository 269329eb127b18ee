/**
 * The diff tab: `smol-patch:` documents hold a file as a patch proposes it, opened with
 * `vscode.diff` against the real file. Read-only; updated when the patch changes.
 */

import * as vscode from 'vscode';
import type { ChatStore } from '../chat/store';
import type { Patch } from '../protocol';
import type { InlineDiffs } from './decorations';
import { applyHunks } from './hunks';
import { filePath } from './patchState';

export const PATCH_SCHEME = 'smol-patch';

export function proposedUri(patch: Patch, fileIndex: number): vscode.Uri {
  const file = vscode.Uri.parse(patch.files[fileIndex].uri);
  return vscode.Uri.from({ scheme: PATCH_SCHEME, path: file.path, query: `patch=${encodeURIComponent(patch.id)}&file=${fileIndex}` });
}

function emptyUri(patch: Patch, fileIndex: number): vscode.Uri {
  const file = vscode.Uri.parse(patch.files[fileIndex].uri);
  return vscode.Uri.from({ scheme: PATCH_SCHEME, path: file.path, query: `patch=${encodeURIComponent(patch.id)}&file=${fileIndex}&side=empty` });
}

export class ProposedFileProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private readonly open = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: ChatStore,
    private readonly diffs: InlineDiffs,
  ) {
    this.disposables.push(
      this.emitter,
      store.subscribe((_a, state, previous) => {
        if (state.patches !== previous.patches) {
          for (const uri of this.open) {
            this.emitter.fire(vscode.Uri.parse(uri));
          }
        }
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    this.open.add(uri.toString());
    const query = new URLSearchParams(uri.query);
    const patch = this.store.state.patches[query.get('patch') ?? ''];
    const fileIndex = Number(query.get('file') ?? '0');
    const file = patch?.files[fileIndex];
    if (!patch || !file) {
      return '(this patch is no longer known: it may have been resolved before a restart)';
    }
    if (query.get('side') === 'empty') {
      return '';
    }
    let base = this.diffs.baseText(file);
    if (base === undefined) {
      try {
        base = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(file.uri)));
      } catch {
        base = ''; // a new file
      }
    }
    return applyHunks(base, file.hunks);
  }

  /** Open the diff tab of one file of a patch (the user asked: this may take focus). */
  async show(patch: Patch, fileIndex = 0): Promise<void> {
    const file = patch.files[fileIndex];
    if (!file) {
      return;
    }
    const original = vscode.Uri.parse(file.uri);
    let left = original;
    try {
      await vscode.workspace.fs.stat(original);
    } catch {
      left = emptyUri(patch, fileIndex);
    }
    const title = `${filePath(file)} ↔ agent: ${patch.summary}`;
    await vscode.commands.executeCommand('vscode.diff', left, proposedUri(patch, fileIndex), title, { preview: true });
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
