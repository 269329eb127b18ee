/**
 * "Ask agent about selection": from the editor context menu, the keybinding, the command
 * palette, and the daemon's code action (`smol.askAboutSelection`, intercepted in the client's
 * middleware). Asks for the question in an input box, then sends it with the selection to the
 * chat panel, which is shown without taking the keyboard from the editor.
 */

import * as vscode from 'vscode';
import type { ChatController } from '../chat/controller';
import type { ChatViewProvider } from '../chat/view';
import { DEFAULT_QUESTION, type AskAboutSelectionArgs, type Selection } from '../protocol';
import * as api from '../vscodeapi';

/** "lines 3-5 of calc.py", "line 3 of calc.py". */
export function describeSelection(path: string, startLine: number, endLine: number): string {
  return startLine === endLine ? `line ${startLine} of ${path}` : `lines ${startLine}-${endLine} of ${path}`;
}

/** A selection ending at column 0 of a line does not include that line. */
export function effectiveLines(range: { start: { line: number }; end: { line: number; character: number } }): [number, number] {
  const endLine = range.end.character === 0 && range.end.line > range.start.line ? range.end.line - 1 : range.end.line;
  return [range.start.line + 1, endLine + 1];
}

export async function askAboutSelection(
  chat: ChatController,
  view: ChatViewProvider,
  args?: AskAboutSelectionArgs,
): Promise<void> {
  let document: vscode.TextDocument;
  let range: vscode.Range;
  if (args?.uri && args.range) {
    document = await vscode.workspace.openTextDocument(vscode.Uri.parse(args.uri));
    range = new vscode.Range(args.range.start.line, args.range.start.character, args.range.end.line, args.range.end.character);
  } else {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void api.showInfo('Smol Instruments: select some code in an editor, then ask the agent about it.');
      return;
    }
    document = editor.document;
    range = editor.selection.isEmpty ? document.lineAt(editor.selection.active.line).range : editor.selection;
  }
  const path = vscode.workspace.asRelativePath(document.uri, false);
  const [first, last] = effectiveLines(range);
  let question = args?.question;
  if (question === undefined) {
    question = await vscode.window.showInputBox({
      title: `Ask the agent about ${describeSelection(path, first, last)}`,
      prompt: 'Your question (Enter with nothing typed asks the default question; Escape cancels)',
      placeHolder: DEFAULT_QUESTION,
      ignoreFocusOut: true,
    });
  }
  if (question === undefined) {
    return; // cancelled
  }
  const selection: Selection = {
    uri: document.uri.toString(),
    range: {
      start: { line: range.start.line, character: range.start.character },
      end: { line: range.end.line, character: range.end.character },
    },
    text: document.getText(range),
  };
  await view.reveal(true);
  void chat.send(question.trim() || DEFAULT_QUESTION, [selection]);
}
