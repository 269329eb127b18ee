import { describe, expect, it } from 'vitest';
import { applyHunks, hunkDecorations, hunkDiff, hunkView, hunkViews, lensLine, MAX_INLINE_LINES, removedLines, splitLines } from '../../src/edits/hunks';
import type { Hunk } from '../../src/protocol';
import { CALC_URI, patch } from './fixtures';

const CALC = '"""calc"""\n\n\ndef add(a, b):\n    """Return the sum."""\n    return a - b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n';

function hunk(startLine: number, endLine: number, newText: string, endChar = 0): Hunk {
  return { range: { start: { line: startLine, character: 0 }, end: { line: endLine, character: endChar } }, newText };
}

describe('hunk geometry', () => {
  it('a replaced line: removed line highlighted, the new line as after-text on it', () => {
    const view = hunkView('p1', 0, 0, CALC_URI, hunk(5, 6, '    return a + b\n'));
    expect(view.removed).toEqual({ first: 5, last: 5 });
    expect(hunkDecorations(view, 11)).toEqual({
      removedLines: [5],
      inserted: [{ line: 5, text: '→ return a + b', lines: ['    return a + b'] }],
    });
    expect(lensLine(view, 11)).toBe(5);
  });

  it('more new lines than old: the surplus joins the last old line', () => {
    const view = hunkView('p1', 0, 0, CALC_URI, hunk(5, 6, '    total = a + b\n    return total\n'));
    const spec = hunkDecorations(view, 11);
    expect(spec.removedLines).toEqual([5]);
    expect(spec.inserted).toEqual([{ line: 5, text: '→ total = a + b  ⏎  return total', lines: ['    total = a + b', '    return total'] }]);
  });

  it('more old lines than new: each new line pairs with an old one, the rest are only removed', () => {
    const view = hunkView('p1', 0, 0, CALC_URI, hunk(3, 6, 'def add(a, b):\n    return a + b\n'));
    const spec = hunkDecorations(view, 11);
    expect(spec.removedLines).toEqual([3, 4, 5]);
    expect(spec.inserted.map((i) => [i.line, i.text])).toEqual([
      [3, '→ def add(a, b):'],
      [4, '→ return a + b'],
    ]);
  });

  it('a pure insertion shows at the end of the line above and removes nothing', () => {
    const view = hunkView('p1', 0, 0, CALC_URI, hunk(8, 8, 'import math\n'));
    expect(view.removed).toBeUndefined();
    expect(hunkDecorations(view, 11)).toEqual({ removedLines: [], inserted: [{ line: 7, text: '＋ import math', lines: ['import math'] }] });
    expect(lensLine(view, 11)).toBe(8);
  });

  it('an insertion at the top anchors on line 0', () => {
    const view = hunkView('p1', 0, 0, CALC_URI, hunk(0, 0, '# header\n'));
    expect(hunkDecorations(view, 11).inserted[0].line).toBe(0);
  });

  it('a deletion says how many lines go', () => {
    const view = hunkView('p1', 0, 0, CALC_URI, hunk(6, 8, ''));
    expect(hunkDecorations(view, 11)).toEqual({ removedLines: [6, 7], inserted: [{ line: 6, text: '− delete 2 lines', lines: [] }] });
  });

  it('a hunk that ends at the end of a file without a final newline includes the last line', () => {
    expect(removedLines({ start: { line: 9, character: 0 }, end: { line: 9, character: 36 } })).toEqual({ first: 9, last: 9 });
  });

  it('long proposals are cut, with a count of the hidden lines', () => {
    const many = Array.from({ length: 6 }, (_, i) => `line${i}`).join('\n') + '\n';
    const spec = hunkDecorations(hunkView('p', 0, 0, CALC_URI, hunk(5, 6, many)), 11);
    expect(spec.inserted[0].text).toContain(`… +${6 - MAX_INLINE_LINES} more lines`);
    expect(spec.inserted[0].lines).toHaveLength(6);
  });

  it('empty new lines are visible', () => {
    const spec = hunkDecorations(hunkView('p', 0, 0, CALC_URI, hunk(5, 6, '\n')), 11);
    expect(spec.inserted[0].text).toBe('→ (empty line)');
  });

  it('clamps lines past the end of a shorter document', () => {
    const spec = hunkDecorations(hunkView('p', 0, 0, CALC_URI, hunk(20, 21, 'x\n')), 5);
    expect(spec.removedLines).toEqual([4]);
  });

  it('numbers hunks across files, as smol.acceptPatch {hunks} does', () => {
    const two = patch({
      files: [
        { uri: 'file:///a.py', path: 'a.py', diff: '', hunks: [hunk(0, 1, 'a\n'), hunk(4, 5, 'b\n')] },
        { uri: 'file:///b.py', path: 'b.py', diff: '', hunks: [hunk(2, 3, 'c\n')] },
      ],
    });
    expect(hunkViews(two).map((v) => [v.index, v.fileIndex, v.uri])).toEqual([
      [0, 0, 'file:///a.py'],
      [1, 0, 'file:///a.py'],
      [2, 1, 'file:///b.py'],
    ]);
  });
});

describe('the proposed file (diff tab)', () => {
  it('applies hunks to the text they were made against', () => {
    expect(applyHunks(CALC, [hunk(5, 6, '    return a + b\n')])).toBe(CALC.replace('a - b', 'a + b'));
  });

  it('applies several hunks, bottom first, and insertions', () => {
    const out = applyHunks(CALC, [hunk(0, 0, 'import math\n'), hunk(9, 10, '    return math.fsum(values) / len(values)\n')]);
    expect(out.startsWith('import math\n"""calc"""')).toBe(true);
    expect(out).toContain('math.fsum(values)');
  });

  it('handles a file without a final newline', () => {
    expect(applyHunks('a\nb', [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, newText: 'c' }])).toBe('a\nc');
  });

  it('writes a hunk as a small diff for the hover', () => {
    const view = hunkView('p', 0, 0, CALC_URI, hunk(5, 6, '    return a + b\n'));
    expect(hunkDiff(view, CALC.split('\n'))).toBe('-     return a - b\n+     return a + b');
  });

  it('splits lines the way editors do', () => {
    expect(splitLines('a\r\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
  });
});
