import { describe, expect, it } from 'vitest';
import type * as vscode from 'vscode';
import type { ChatStore } from '../../src/chat/store';
import { PatchCodeLenses } from '../../src/edits/codelens';
import type { InlineDiffs } from '../../src/edits/decorations';
import type { Hunk, HunkStatus, Patch } from '../../src/protocol';
import { CALC_URI, patch } from './fixtures';

function hunk(id: number, line: number, status: HunkStatus = 'pending'): Hunk {
  return { id, status, range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, newText: `new ${id}\n`, added: 1, removed: 1 };
}

function twoHunks(first: HunkStatus, second: HunkStatus): Patch {
  return patch({ files: [{ ...patch().files[0], hunks: [hunk(0, 2, first), hunk(1, 9, second)] }] });
}

/** The lenses of calc.py as (line, title, arguments), with the buffer holding the base or not. */
function lenses(p: Patch, matchesBase = true): [number, string, unknown[]][] {
  const store = { state: { patches: { [p.id]: p } } } as unknown as ChatStore;
  const diffs = {
    onDidRedraw: () => ({ dispose: () => undefined }),
    matchesBase: () => matchesBase,
    fileOf: () => p.files[0],
  } as unknown as InlineDiffs;
  const document = { uri: { toString: () => CALC_URI }, lineCount: 20 } as unknown as vscode.TextDocument;
  return new PatchCodeLenses(store, diffs)
    .provideCodeLenses(document)
    .map((lens) => [lens.range.start.line, lens.command?.title ?? '', lens.command?.arguments ?? []]);
}

describe('CodeLens per hunk', () => {
  it('two pending hunks: Accept and Reject decide one hunk each; Accept all / Reject all once', () => {
    expect(lenses(twoHunks('pending', 'pending'))).toEqual([
      [2, '$(sparkle) Agent: add() must add, not subtract (+1 −1)', ['p1', 0]],
      [2, '$(check) Accept', ['p1', [0]]],
      [2, '$(close) Reject', ['p1', [0]]],
      [2, 'Accept all 2', ['p1']],
      [2, 'Reject all', ['p1']],
      [2, '$(diff) Diff', ['p1', 0]],
      [9, '$(check) Accept', ['p1', [1]]],
      [9, '$(close) Reject', ['p1', [1]]],
      [9, '$(diff) Diff', ['p1', 0]],
    ]);
  });

  it('after one hunk is accepted the other keeps its lenses, now deciding the rest of the patch', () => {
    expect(lenses(twoHunks('accepted', 'pending'))).toEqual([
      [9, '$(sparkle) Agent: add() must add, not subtract (+1 −1)', ['p1', 0]],
      [9, '$(check) Accept', ['p1']],
      [9, '$(close) Reject', ['p1']],
      [9, '$(diff) Diff', ['p1', 0]],
    ]);
  });

  it('a stale hunk says so and offers to ask again; its pending sibling stays actionable', () => {
    const titles = lenses(twoHunks('pending', 'stale')).map(([line, title]) => [line, title]);
    expect(titles).toContainEqual([9, '$(warning) Stale agent hunk: add() must add, not subtract']);
    expect(titles).toContainEqual([9, 'Ask the agent again']);
    expect(titles).toContainEqual([2, '$(check) Accept']);
  });

  it('a buffer that is not the base gets one warning with Accept what still applies', () => {
    expect(lenses(twoHunks('pending', 'pending'), false).map(([line, title, args]) => [line, title, args])).toEqual([
      [2, '$(warning) This file changed since the agent proposed this patch: add() must add, not subtract', ['p1', 0]],
      [2, 'Accept what still applies', ['p1']],
      [2, 'Reject', ['p1']],
      [2, 'Ask the agent again', ['p1']],
    ]);
  });

  it('a decided patch draws nothing', () => {
    expect(lenses(twoHunks('accepted', 'rejected'))).toEqual([]);
  });
});
