import { describe, expect, it } from 'vitest';
import {
  askAgainMessage,
  filePath,
  hunksIn,
  normalizeUri,
  PatchBases,
  patchStats,
  pendingCount,
  pendingPatches,
  sameUri,
  stalePatches,
  staleExplanation,
  statusBarText,
  totalHunks,
} from '../../src/edits/patchState';
import { CALC_URI, patch } from './fixtures';

const patches = {
  p1: patch(),
  p2: patch({ id: 'p2', summary: 'second', files: [{ uri: 'file:///work/proj/test_calc.py', path: 'test_calc.py', diff: '', hunks: [{ range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, newText: 'x\n' }] }] }),
  p3: patch({ id: 'p3', status: 'accepted' }),
  p4: patch({ id: 'p4', status: 'stale', statusReason: 'changed since the patch was proposed: calc.py' }),
};

describe('patch list state', () => {
  it('counts pending patches for the status bar', () => {
    expect(pendingCount(patches)).toBe(2);
    expect(pendingPatches(patches).map((p) => p.id)).toEqual(['p1', 'p2']);
    expect(statusBarText(patches)).toBe('$(git-pull-request) 2 agent patches');
    expect(statusBarText({ p1: patch() })).toBe('$(git-pull-request) 1 agent patch');
    expect(statusBarText({ p3: patches.p3 })).toBeUndefined();
  });

  it('knows which are stale and explains them', () => {
    expect(stalePatches(patches).map((p) => p.id)).toEqual(['p4']);
    expect(staleExplanation(patches.p4)).toBe(
      'The agent\'s patch "add() must add, not subtract" no longer applies: calc.py changed since it was proposed (changed since the patch was proposed: calc.py). Nothing was written.',
    );
    expect(askAgainMessage(patches.p4)).toContain('Read the current text of calc.py again and propose the change again');
  });

  it('finds the pending hunks of one document', () => {
    expect(hunksIn(patches, CALC_URI).map((v) => v.patchId)).toEqual(['p1']);
    expect(hunksIn(patches, CALC_URI, ['pending', 'stale']).map((v) => v.patchId)).toEqual(['p1', 'p4']);
    expect(hunksIn(patches, 'file:///elsewhere.py')).toEqual([]);
  });

  it('matches URIs written differently by VS Code and Python', () => {
    expect(sameUri('file:///c%3A/proj/a%20b.py', 'file:///C:/proj/a b.py')).toBe(true);
    expect(sameUri('file:///proj/a.py', 'file:///proj/b.py')).toBe(false);
    expect(normalizeUri('file:///x/%E2%82%AC.py')).toBe('file:///x/€.py');
  });

  it('takes +A −R from the daemon, else counts the hunks', () => {
    expect(patchStats(patch())).toEqual({ added: 1, removed: 1 });
    expect(patchStats(patch({ added: undefined, removed: undefined }))).toEqual({ added: 1, removed: 1 });
    expect(totalHunks(patch())).toBe(1);
  });

  it('names files by their path, else by the uri', () => {
    expect(filePath({ uri: 'file:///a/b/c.py', path: '', diff: '', hunks: [] })).toBe('c.py');
    expect(filePath({ uri: 'file:///a/b/c.py', path: 'b/c.py', diff: '', hunks: [] })).toBe('b/c.py');
  });
});

describe('PatchBases: a buffer edited since the patch came is not drawn line by line', () => {
  it('records the first text seen, then compares', () => {
    const bases = new PatchBases();
    expect(bases.matches('p1', CALC_URI, 'v1')).toBe(true);
    expect(bases.matches('p1', CALC_URI, 'v2')).toBe(false);
    expect(bases.matches('p1', CALC_URI, 'v1')).toBe(true); // undone back: fine again
    expect(bases.base('p1', CALC_URI)).toBe('v1');
  });

  it('forgets patches that are no longer pending', () => {
    const bases = new PatchBases();
    bases.matches('p1', CALC_URI, 'v1');
    bases.matches('p2', CALC_URI, 'v1');
    bases.retain(new Set(['p2']));
    expect(bases.base('p1', CALC_URI)).toBeUndefined();
    expect(bases.base('p2', CALC_URI)).toBe('v1');
  });
});
