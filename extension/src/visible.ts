/**
 * The extension's counterpart of the daemon's `base/visible.py`: untrusted text (a command, a
 * diff line, a summary, a path, tool output, the model's words) drawn with nothing invisible,
 * so what the user reads before deciding is what runs or is written.
 *
 * - C0 controls and DEL become their control pictures (`␛`, `␍`, `␀`, `␡`); a tab is kept;
 * - C1 controls, bidi controls, zero-width and other format characters, spaces other than the
 *   ASCII one, line and paragraph separators, surrogates, private-use and unassigned code
 *   points become `⟨U+202E⟩`; a lone surrogate DC80–DCFF (a byte that was not UTF-8, as the
 *   daemon's readers keep it) becomes `⟨0xNN⟩`;
 * - with `breaks`, every line break is shown as `⏎` and still breaks the line.
 *
 * `textWarnings` says in words what a command's or a diff's text hides, with the daemon's
 * words. tests/visible_cases.json holds inputs and outputs that both implementations must
 * give. One difference is accepted: a code point unassigned in Python's Unicode tables but
 * assigned in Node's (a newer Unicode) is marked by the daemon and shown here.
 *
 * No `vscode` import: the webview and plain Node tests use it as is.
 */

export const BREAK_MARK = '⏎';

const MARKED = /^[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]$/u;
// Everything outside printable ASCII (plus tab and newline) is looked at one by one.
const SUSPECT = /[^\t\n\x20-\x7e]/gu;

function hex(code: number, digits: number): string {
  return code.toString(16).toUpperCase().padStart(digits, '0');
}

function mark(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20) {
    return String.fromCharCode(0x2400 + code);
  }
  if (code === 0x7f) {
    return '\u2421';
  }
  if (code >= 0xdc80 && code <= 0xdcff) {
    return `⟨0x${hex(code - 0xdc00, 2)}⟩`;
  }
  return `⟨U+${hex(code, 4)}⟩`;
}

function needsMark(char: string): boolean {
  if (char === '\t' || char === '\n') {
    return false;
  }
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) {
    return true;
  }
  return code >= 0x80 && MARKED.test(char);
}

/** `text` with every invisible or terminal-controlling character drawn as a visible mark. */
export function visible(text: string, options: { breaks?: boolean } = {}): string {
  const shown = text.replace(SUSPECT, (char) => (needsMark(char) ? mark(char) : char));
  return options.breaks ? shown.replaceAll('\n', `${BREAK_MARK}\n`) : shown;
}

/** Whether `text` holds anything `visible` has to mark (a line break does not count). */
export function hidden(text: string): boolean {
  for (const char of text.match(SUSPECT) ?? []) {
    if (needsMark(char)) {
      return true;
    }
  }
  return false;
}

/** What a command's or a diff's text hides, in words (the daemon's `text_warnings`). */
export function textWarnings(text: string, kind: 'command' | 'patch'): string[] {
  const what = kind === 'command' ? 'command' : 'diff';
  const found: string[] = [];
  if (hidden(text)) {
    const lines = text
      .split('\n')
      .map((line, i) => (hidden(line) ? i + 1 : 0))
      .filter((n) => n > 0);
    const where = lines.slice(0, 5).join(', ') + (lines.length > 5 ? ', ...' : '');
    found.push(
      `Warning: this ${what} holds characters a terminal or editor would not show ` +
        `(escape sequences, control, bidirectional or invisible characters; line ` +
        `${where}). They are drawn here as ␛, ␍ or ⟨U+...⟩: read it as drawn.`,
    );
  }
  const count = text.replace(/\n+$/, '').split('\n').length;
  if (kind === 'command' && count > 1) {
    found.push(`Warning: this command is ${count} lines long and every line runs.`);
  }
  return found;
}
