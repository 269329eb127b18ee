/**
 * extension/src/visible.ts against the table the daemon's tests also read
 * (tests/visible_cases.json): both sides draw the same text the same way, with the same words.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BREAK_MARK, hidden, textWarnings, visible } from '../../src/visible';

interface Table {
  cases: { text: string; shown: string; shown_breaks: string; hidden: boolean }[];
  warnings: { text: string; kind: 'command' | 'patch'; warnings: string[] }[];
}

const table = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'tests', 'visible_cases.json'), 'utf8')) as Table;

describe('visible, as the daemon draws it', () => {
  it.each(table.cases)('draws %j', (item) => {
    expect(visible(item.text)).toBe(item.shown);
    expect(visible(item.text, { breaks: true })).toBe(item.shown_breaks);
    expect(hidden(item.text)).toBe(item.hidden);
  });

  it.each(table.warnings)('warns about %j', (item) => {
    expect(textWarnings(item.text, item.kind)).toEqual(item.warnings);
  });

  it('leaves nothing unprintable in what it draws', () => {
    let every = '';
    for (let code = 0; code < 0x3000; code += 1) {
      every += String.fromCharCode(code);
    }
    const shown = visible(every, { breaks: true });
    expect([...shown].filter((c) => c !== '\t' && c !== '\n' && /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(c))).toEqual([]);
    expect(shown).toContain(`${BREAK_MARK}\n`);
  });
});
