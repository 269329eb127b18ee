import { describe, expect, it } from 'vitest';
import {
  checkVerdict,
  askAgainMessage,
  filePath,
  hunksIn,
  normalizeUri,
  hunkSummary,
  patchStats,
  pendingCount,
  pendingPatches,
  sameUri,
  stalePatches,
  staleExplanation,
  staleHunksExplanation,
  statusBarText,
  totalHunks,
} from '../../src/edits/patchState';
import { BaseHashes, textHash } from '../../src/edits/baseHash';
import type { Hunk, HunkStatus, Patch } from '../../src/protocol';
import { CALC_URI, patch } from './fixtures';

function hunk(id: number, line: number, status: HunkStatus = 'pending'): Hunk {
  return { id, status, range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, newText: `x${id}\n`, added: 1, removed: 1 };
}

function twoHunks(first: HunkStatus, second: HunkStatus, status: Patch['status'] = 'pending'): Patch {
  const base = patch();
  return patch({ id: 'p5', status, files: [{ ...base.files[0], hunks: [hunk(0, 1, first), hunk(1, 9, second)] }] });
}

const patches = {
  p1: patch(),
  p2: patch({ id: 'p2', summary: 'second', files: [{ uri: 'file:///work/proj/test_calc.py', path: 'test_calc.py', diff: '', baseHash: null, hunks: [hunk(0, 0)] }] }),
  p3: patch({ id: 'p3', status: 'accepted', files: [{ ...patch().files[0], hunks: [hunk(0, 5, 'accepted')] }] }),
  p4: patch({ id: 'p4', status: 'stale', statusReason: 'changed since the patch was proposed: calc.py', files: [{ ...patch().files[0], hunks: [hunk(0, 5, 'stale')] }] }),
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
    expect(filePath({ uri: 'file:///a/b/c.py', path: '', diff: '', baseHash: null, hunks: [] })).toBe('c.py');
    expect(filePath({ uri: 'file:///a/b/c.py', path: 'b/c.py', diff: '', baseHash: null, hunks: [] })).toBe('b/c.py');
  });
});

describe('per-hunk state', () => {
  it('a patch with one hunk decided keeps the other pending, drawn and counted', () => {
    const partly = twoHunks('accepted', 'pending');
    expect(pendingCount({ p5: partly })).toBe(1);
    expect(hunksIn({ p5: partly }, CALC_URI).map((v) => v.hunkId)).toEqual([1]);
    expect(hunkSummary(partly)).toBe('2 hunks: 1 accepted · 1 pending');
    expect(statusBarText({ p5: twoHunks('pending', 'pending') })).toBe('$(git-pull-request) 1 agent patch (2 hunks)');
    expect(statusBarText({ p5: partly })).toBe('$(git-pull-request) 1 agent patch');
  });

  it('a stale hunk is listed as stale while its sibling stays pending', () => {
    const mixed = twoHunks('pending', 'stale');
    expect(hunksIn({ p5: mixed }, CALC_URI).map((v) => v.hunkId)).toEqual([0]);
    expect(hunksIn({ p5: mixed }, CALC_URI, ['stale']).map((v) => v.hunkId)).toEqual([1]);
    expect(staleHunksExplanation(mixed, [1])).toBe(
      'hunk 2 of the agent\'s patch "add() must add, not subtract" no longer applied: its lines changed since it was proposed. Nothing was written for it.',
    );
  });

  it('says nothing about hunks of a one-hunk or undecided patch', () => {
    expect(hunkSummary(patch())).toBe('');
    expect(hunkSummary(twoHunks('pending', 'pending'))).toBe('');
    expect(hunkSummary(twoHunks('accepted', 'rejected', 'partial'))).toBe('2 hunks: 1 accepted · 1 rejected');
  });
});

describe('BaseHashes: a buffer is drawn line by line only when it holds the patch\'s base', () => {
  const file = { ...patch().files[0], baseHash: textHash('v1\n') };

  it('compares the daemon\'s SHA-256 with the buffer\'s text', () => {
    const hashes = new BaseHashes();
    expect(hashes.matches(file, CALC_URI, 1, () => 'v1\n')).toBe(true);
    expect(hashes.matches(file, CALC_URI, 2, () => 'v2\n')).toBe(false);
    expect(hashes.matches(file, CALC_URI, 3, () => 'v1\n')).toBe(true); // undone back: fine again
  });

  it('hashes a document version once', () => {
    const hashes = new BaseHashes();
    let reads = 0;
    const text = () => {
      reads += 1;
      return 'v1\n';
    };
    hashes.matches(file, CALC_URI, 7, text);
    hashes.matches(file, CALC_URI, 7, text);
    expect(reads).toBe(1);
    hashes.forget(CALC_URI);
    hashes.matches(file, CALC_URI, 7, text);
    expect(reads).toBe(2);
  });

  it('a file to create matches only an empty buffer', () => {
    const creating = { ...file, baseHash: null };
    expect(new BaseHashes().matches(creating, CALC_URI, 1, () => '')).toBe(true);
    expect(new BaseHashes().matches(creating, CALC_URI, 1, () => 'x')).toBe(false);
  });

  it('agrees with the daemon on non-ASCII and CRLF text', () => {
    // sha256 of "héllo\r\n" in UTF-8, as Python's hashlib computes it.
    expect(textHash('héllo\r\n')).toBe('c9f0d761d6738e2884e0c20ff19a2d5b58c62b09f663db0ad2c8eb280390c120');
    expect(textHash('v1\n')).toBe('2d27fbdf4e8ca207afbfa388ca9172fbcc6c70e534af2476b3b704f87debadcf');
  });
});

describe('checkVerdict', () => {
  it('says a failure the patch did not cause, instead of a plain cross', () => {
    const base = { command: 'python -m pytest -q', output: '' };
    expect(checkVerdict({ ...base, passed: true })).toEqual({ kind: 'passed', mark: '✓' });
    expect(checkVerdict({ ...base, passed: false })).toEqual({ kind: 'failed', mark: '✗' });
    expect(checkVerdict({ ...base, passed: false, fails_without_patch: true })).toEqual({
      kind: 'preexisting',
      mark: '✗ (fails without the patch too)',
    });
  });
});
