/**
 * How a proposed hunk is drawn in its file: pure geometry, no `vscode` import.
 *
 * A hunk replaces whole lines: `range` runs from the start of its first old line to the start
 * of the line after its last (or to the end of the text), and `newText` holds the new lines.
 * Removed lines get a whole-line background; the proposed lines are shown as after-text — each
 * next to the old line it replaces, the rest on the last old line — since an editor cannot show
 * lines that are not in the buffer without changing it (and changing it would make the patch
 * stale).
 */

import type { Hunk, HunkStatus, Patch, Range } from '../protocol';

/** Longest after-text, in characters; the Diff lens shows the whole hunk. */
export const MAX_INLINE_CHARS = 160;
/** Most proposed lines joined onto one old line. */
export const MAX_INLINE_LINES = 3;

export interface HunkView {
  patchId: string;
  /** The hunk's stable id: what `smol.acceptPatch` / `smol.rejectPatch` `{hunks}` take. */
  hunkId: number;
  status: HunkStatus;
  fileIndex: number;
  uri: string;
  /** First and last removed line (0-based, inclusive), or undefined for a pure insertion. */
  removed?: { first: number; last: number };
  /** The line new text goes before (insertions) or the first removed line. */
  anchorLine: number;
  newLines: string[];
  added: number;
  removedCount: number;
}

export interface AfterText {
  line: number;
  text: string;
  /** The proposed lines this text stands for (hover, diff). */
  lines: string[];
}

export interface HunkDecorations {
  /** Whole lines highlighted as removed. */
  removedLines: number[];
  /** After-text showing proposed lines. */
  inserted: AfterText[];
}

/** The new text's lines, without the empty piece after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split(/\r\n|\n|\r/);
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/** The removed lines of a hunk (0-based, inclusive), undefined for a pure insertion. */
export function removedLines(range: Range): { first: number; last: number } | undefined {
  const { start, end } = range;
  if (start.line === end.line && start.character === end.character) {
    return undefined;
  }
  const last = end.character === 0 ? end.line - 1 : end.line;
  return last < start.line ? undefined : { first: start.line, last };
}

/** The patch's hunks with one of `statuses` (default: the pending ones), across its files. */
export function hunkViews(patch: Patch, statuses: HunkStatus[] = ['pending']): HunkView[] {
  const views: HunkView[] = [];
  patch.files.forEach((file, fileIndex) => {
    for (const hunk of file.hunks) {
      if (statuses.includes(hunk.status)) {
        views.push(hunkView(patch.id, fileIndex, file.uri, hunk));
      }
    }
  });
  return views;
}

export function hunkView(patchId: string, fileIndex: number, uri: string, hunk: Hunk): HunkView {
  const removed = removedLines(hunk.range);
  const newLines = splitLines(hunk.newText);
  return {
    patchId,
    hunkId: hunk.id,
    status: hunk.status,
    fileIndex,
    uri,
    removed,
    anchorLine: hunk.range.start.line,
    newLines,
    added: newLines.length,
    removedCount: removed ? removed.last - removed.first + 1 : 0,
  };
}

function inline(lines: string[]): string {
  const shown = lines.slice(0, MAX_INLINE_LINES).map((l) => l.trim());
  let text = shown.join('  ⏎  ');
  const hidden = lines.length - shown.length;
  if (hidden > 0) {
    text += `  … +${hidden} more line${hidden === 1 ? '' : 's'}`;
  }
  if (text.length > MAX_INLINE_CHARS) {
    text = `${text.slice(0, MAX_INLINE_CHARS - 1)}…`;
  }
  return text;
}

/**
 * Where to draw one hunk in a document of `lineCount` lines: the removed lines, and after-text
 * for the proposed ones (an empty line shows as "(empty line)").
 */
export function hunkDecorations(view: HunkView, lineCount: number): HunkDecorations {
  const lastLine = Math.max(0, lineCount - 1);
  const clamp = (line: number) => Math.min(Math.max(0, line), lastLine);
  const shownLines = view.newLines.map((l) => (l.trim() === '' ? '(empty line)' : l));
  if (!view.removed) {
    // A pure insertion goes before `anchorLine`: show it at the end of the line above.
    const line = clamp(view.anchorLine > 0 ? view.anchorLine - 1 : 0);
    return {
      removedLines: [],
      inserted: shownLines.length ? [{ line, text: `＋ ${inline(shownLines)}`, lines: view.newLines }] : [],
    };
  }
  const removed: number[] = [];
  for (let line = view.removed.first; line <= view.removed.last; line += 1) {
    removed.push(clamp(line));
  }
  const inserted: AfterText[] = [];
  if (shownLines.length === 0) {
    inserted.push({ line: removed[0], text: `− delete ${removed.length} line${removed.length === 1 ? '' : 's'}`, lines: [] });
  } else {
    // Pair old line i with new line i; the surplus new lines go onto the last old line.
    const pairs = Math.min(removed.length, shownLines.length);
    for (let i = 0; i < pairs; i += 1) {
      const isLast = i === pairs - 1;
      const lines = isLast ? shownLines.slice(i) : [shownLines[i]];
      inserted.push({ line: removed[i], text: `→ ${inline(lines)}`, lines: isLast ? view.newLines.slice(i) : [view.newLines[i]] });
    }
  }
  return { removedLines: removed, inserted };
}

/** The line a hunk's CodeLens sits on. */
export function lensLine(view: HunkView, lineCount: number): number {
  const line = view.removed ? view.removed.first : view.anchorLine;
  return Math.min(Math.max(0, line), Math.max(0, lineCount - 1));
}

/** The hunk as a small unified diff, for hovers. */
export function hunkDiff(view: HunkView, oldLines: string[]): string {
  const out: string[] = [];
  if (view.removed) {
    for (let line = view.removed.first; line <= view.removed.last; line += 1) {
      out.push(`- ${oldLines[line] ?? ''}`);
    }
  }
  for (const line of view.newLines) {
    out.push(`+ ${line}`);
  }
  return out.join('\n');
}

function offsetAt(text: string, lineStarts: number[], line: number, character: number): number {
  if (line >= lineStarts.length) {
    return text.length;
  }
  return Math.min(lineStarts[line] + character, text.length);
}

/** The proposed file: the pending `hunks` (ranges in `text`'s coordinates) applied to `text`. */
export function applyHunks(text: string, hunks: Hunk[]): string {
  return applyTextEdits(
    text,
    hunks.filter((h) => h.status === 'pending'),
  );
}

/** LSP TextEdits (ranges in `text`'s coordinates, not overlapping) applied as an editor does. */
export function applyTextEdits(text: string, edits: { range: Range; newText: string }[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\n') {
      lineStarts.push(i + 1);
    }
  }
  const ordered = edits
    .map((h) => ({
      start: offsetAt(text, lineStarts, h.range.start.line, h.range.start.character),
      end: offsetAt(text, lineStarts, h.range.end.line, h.range.end.character),
      newText: h.newText,
    }))
    .sort((a, b) => b.start - a.start);
  let result = text;
  for (const edit of ordered) {
    result = result.slice(0, edit.start) + edit.newText + result.slice(edit.end);
  }
  return result;
}
