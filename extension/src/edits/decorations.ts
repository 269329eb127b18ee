/**
 * Pending patches drawn in their files, in the theme's diff colours: removed lines with
 * `diffEditor.removedLineBackground`, proposed lines as after-text on an inserted-text
 * background, the hunk as a diff in the hover. Drawing never opens, reveals or focuses an
 * editor: a patch shows up wherever its file is already visible, and when it is opened later.
 * The proposed text, the hover's diff and summary go through `visible`: an escape sequence,
 * a bidi override or a zero-width character in a proposed line is drawn as a mark, and the
 * hover says in words that the hunk holds one.
 */

import * as vscode from 'vscode';
import type { ChatStore } from '../chat/store';
import type { PatchFile } from '../protocol';
import { BaseHashes } from './baseHash';
import { hunkDecorations, hunkDiff, type HunkView } from './hunks';
import { hunksIn, sameUri } from './patchState';
import { textWarnings, visible } from '../visible';

export class InlineDiffs implements vscode.Disposable {
  readonly hashes = new BaseHashes();
  private readonly removedType: vscode.TextEditorDecorationType;
  private readonly insertedType: vscode.TextEditorDecorationType;
  private readonly changedEmitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  private pendingRedraw: ReturnType<typeof setTimeout> | undefined;

  /** Fires after a redraw (CodeLens and the diff tab follow). */
  readonly onDidRedraw = this.changedEmitter.event;

  constructor(private readonly store: ChatStore) {
    this.removedType = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.deletedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
    });
    this.insertedType = vscode.window.createTextEditorDecorationType({
      rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      // The proposed text as a chip on the editor's own (opaque) background, in the theme's
      // "added" colour: readable on top of the removed line's red.
      after: {
        margin: '0 0 0 2em',
        color: new vscode.ThemeColor('gitDecoration.addedResourceForeground'),
        backgroundColor: new vscode.ThemeColor('editor.background'),
        border: '1px solid',
        borderColor: new vscode.ThemeColor('gitDecoration.addedResourceForeground'),
      },
    });
    this.disposables.push(
      this.removedType,
      this.insertedType,
      this.changedEmitter,
      store.subscribe((_action, state, previous) => {
        if (state.patches !== previous.patches) {
          this.redraw();
        }
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.redraw()),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (this.hasPatches(event.document.uri.toString())) {
          this.scheduleRedraw();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((document) => this.hashes.forget(document.uri.toString())),
    );
    this.redraw();
  }

  private hasPatches(uri: string): boolean {
    return hunksIn(this.store.state.patches, uri, ['pending', 'stale']).length > 0;
  }

  private scheduleRedraw(): void {
    if (this.pendingRedraw) {
      clearTimeout(this.pendingRedraw);
    }
    this.pendingRedraw = setTimeout(() => {
      this.pendingRedraw = undefined;
      this.redraw();
    }, 80);
  }

  /** Whether the document holds the text the file's hunk ranges are in (the daemon's `baseHash`). */
  matchesBase(file: PatchFile | undefined, document: vscode.TextDocument): boolean {
    return file !== undefined && this.hashes.matches(file, document.uri.toString(), document.version, () => document.getText());
  }

  /** The patch file a hunk view belongs to. */
  fileOf(view: HunkView): PatchFile | undefined {
    return this.store.state.patches[view.patchId]?.files[view.fileIndex];
  }

  redraw(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      this.draw(editor);
    }
    this.changedEmitter.fire();
  }

  private draw(editor: vscode.TextEditor): void {
    const document = editor.document;
    const views = hunksIn(this.store.state.patches, document.uri.toString());
    const removed: vscode.DecorationOptions[] = [];
    const inserted: vscode.DecorationOptions[] = [];
    const oldLines = views.length ? document.getText().split(/\r?\n/) : [];
    for (const view of views) {
      if (!this.matchesBase(this.fileOf(view), document)) {
        continue; // edited since: line numbers no longer hold; the CodeLens says so
      }
      const spec = hunkDecorations(view, document.lineCount);
      const hover = hoverFor(view, oldLines, this.store.state.patches[view.patchId]?.summary ?? '');
      for (const line of spec.removedLines) {
        removed.push({ range: new vscode.Range(line, 0, line, 0), hoverMessage: hover });
      }
      for (const item of spec.inserted) {
        const end = document.lineAt(item.line).range.end;
        inserted.push({
          range: new vscode.Range(end, end),
          hoverMessage: hover,
          renderOptions: { after: { contentText: visible(item.text) } },
        });
      }
    }
    editor.setDecorations(this.removedType, removed);
    editor.setDecorations(this.insertedType, inserted);
  }

  /** Pending hunks in a document whose text still matches (for CodeLens and commands). */
  hunksAt(document: vscode.TextDocument): HunkView[] {
    return hunksIn(this.store.state.patches, document.uri.toString()).filter((v) => this.matchesBase(this.fileOf(v), document));
  }

  /** The open document's text when it is the file's base; undefined otherwise (read the disk). */
  baseText(file: PatchFile): string | undefined {
    const document = vscode.workspace.textDocuments.find((d) => sameUri(d.uri.toString(), file.uri));
    return document && this.matchesBase(file, document) ? document.getText() : undefined;
  }

  dispose(): void {
    if (this.pendingRedraw) {
      clearTimeout(this.pendingRedraw);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function hoverFor(view: HunkView, oldLines: string[], summary: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  const diff = hunkDiff(view, oldLines);
  md.appendMarkdown(`**Agent proposes:** ${escapeMarkdown(visible(summary, { breaks: true }))} (+${view.added} −${view.removedCount})\n\n`);
  for (const warning of textWarnings(diff, 'patch')) {
    md.appendMarkdown(`$(warning) ${escapeMarkdown(warning)}\n\n`);
  }
  md.appendCodeblock(visible(diff), 'diff');
  return md;
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
