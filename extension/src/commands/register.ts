/** Every `smolInstruments.*` command, and what the chat panel's buttons do. */

import * as vscode from 'vscode';
import type { ChatController } from '../chat/controller';
import type { FromWebview } from '../chat/messages';
import type { ChatStore } from '../chat/store';
import type { ChatViewProvider } from '../chat/view';
import type { Daemon } from '../client/daemon';
import { patchAtCursor, type PatchCodeLenses } from '../edits/codelens';
import type { PatchActions } from '../edits/patchActions';
import { traceUrl } from '../settings';
import type { AskAboutSelectionArgs } from '../protocol';
import * as api from '../vscodeapi';
import { askAboutSelection } from './askAboutSelection';
import { COMMANDS } from './ids';

export interface Parts {
  store: ChatStore;
  daemon: Daemon;
  chat: ChatController;
  view: ChatViewProvider;
  patches: PatchActions;
  lenses: PatchCodeLenses;
}

export function registerCommands(parts: Parts): vscode.Disposable[] {
  const { store, daemon, chat, view, patches, lenses } = parts;
  const chosen = async (patchId: unknown, placeHolder: string): Promise<string | undefined> =>
    typeof patchId === 'string' ? patchId : (patchAtCursor(store, vscode.window.activeTextEditor) ?? (await patches.pick(placeHolder)));
  return [
    api.registerCommand(COMMANDS.askAboutSelection, (args?: AskAboutSelectionArgs) =>
      // Called from a menu, VS Code passes the document's Uri: only a {uri, range} object is ours.
      askAboutSelection(chat, view, args && typeof args === 'object' && 'range' in args ? args : undefined),
    ),
    api.registerCommand(COMMANDS.newConversation, async () => {
      chat.newConversation();
      await view.reveal(false);
      view.focusInput();
    }),
    api.registerCommand(COMMANDS.stop, () => chat.stop()),
    api.registerCommand(COMMANDS.acceptPatch, async (patchId?: unknown, hunks?: unknown) => {
      const id = await chosen(patchId, 'Accept which agent patch?');
      if (id) {
        await patches.accept(id, Array.isArray(hunks) ? (hunks as number[]) : undefined);
      }
    }),
    api.registerCommand(COMMANDS.rejectPatch, async (patchId?: unknown) => {
      const id = await chosen(patchId, 'Reject which agent patch?');
      if (id) {
        await patches.reject(id);
      }
    }),
    api.registerCommand(COMMANDS.showPatchDiff, async (patchId?: unknown, fileIndex?: unknown) => {
      const id = await chosen(patchId, 'Show which agent patch?');
      if (id) {
        await patches.showDiff(id, typeof fileIndex === 'number' ? fileIndex : 0);
      }
    }),
    api.registerCommand(COMMANDS.acceptAll, () => patches.acceptAll()),
    api.registerCommand(COMMANDS.rejectAll, () => patches.rejectAll()),
    api.registerCommand(COMMANDS.restartDaemon, async () => {
      if (await daemon.restart()) {
        await patches.refresh();
      }
    }),
    api.registerCommand(COMMANDS.showLog, () => daemon.output.show(true)),
    api.registerCommand(COMMANDS.askAgain, (patchId?: unknown) => {
      if (typeof patchId === 'string') {
        void view.reveal(true);
        void chat.askAgain(patchId);
      }
    }),
    api.registerCommand(COMMANDS.dismissPatch, (patchId?: unknown) => {
      if (typeof patchId === 'string') {
        lenses.dismiss(patchId);
      }
    }),
  ];
}

/** The chat panel's messages. */
export function handleWebviewMessage(parts: Parts, message: FromWebview): Promise<void> | void {
  const { store, chat, patches } = parts;
  switch (message.type) {
    case 'send':
      return chat.send(message.text);
    case 'stop':
      return chat.stop();
    case 'newConversation':
      chat.newConversation();
      return;
    case 'selectConversation':
      return chat.select(message.id);
    case 'acceptPatch':
      return patches.accept(message.patchId).then(() => undefined);
    case 'rejectPatch':
      return patches.reject(message.patchId).then(() => undefined);
    case 'showDiff':
      return patches.showDiff(message.patchId);
    case 'askAgain':
      return chat.askAgain(message.patchId);
    case 'answerApproval':
      return chat.answerApproval(message.approvalId, message.answer);
    case 'openTrace': {
      const template = store.state.traceUrlTemplate;
      if (template) {
        void api.openExternal(traceUrl(template, message.traceId));
      }
      return;
    }
    case 'openContext': {
      const uri = vscode.Uri.parse(message.uri);
      if (uri.scheme !== 'file' && uri.scheme !== 'untitled') {
        return; // the panel only links the selections it was given
      }
      const line = Math.max(0, message.line - 1);
      void vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
      return;
    }
    case 'restartDaemon':
      return Promise.resolve(api.executeCommand(COMMANDS.restartDaemon)).then(() => undefined);
    case 'showLog':
      parts.daemon.output.show(true);
      return;
    case 'manageTrust':
      return Promise.resolve(api.executeCommand('workbench.trust.manage')).then(() => undefined);
    default:
      return;
  }
}
