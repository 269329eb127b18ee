/** Wires the parts together; each lives in its own module. */

import * as vscode from 'vscode';
import { ChatController } from './chat/controller';
import { initialState } from './chat/state';
import { ChatStore, newId } from './chat/store';
import { CHAT_VIEW_ID, ChatViewProvider } from './chat/view';
import { Daemon } from './client/daemon';
import { handleWebviewMessage, registerCommands, type Parts } from './commands/register';
import { PatchCodeLenses } from './edits/codelens';
import { InlineDiffs } from './edits/decorations';
import { PATCH_SCHEME, ProposedFileProvider } from './edits/diffProvider';
import { PatchActions } from './edits/patchActions';
import { PatchStatusBar } from './edits/statusBar';
import { askAboutSelection } from './commands/askAboutSelection';
import type { ApprovalAnswer } from './protocol';
import { daemonSettings, externalTraceTemplate, SECTION, traceUrlTemplate, tracingEnabled } from './settings';
import * as api from './vscodeapi';

let running: Daemon | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const store = new ChatStore(initialState(newId(), Date.now()));
  // The hooks run only after activation has finished wiring, when every const below is set.
  const daemon: Daemon = new Daemon({
    askAboutSelection: (args): Promise<void> => askAboutSelection(chat, view, args),
    approve: (params, token): Promise<ApprovalAnswer | null> => chat.approve(params, token),
  });
  const chat: ChatController = new ChatController(store, daemon);
  const view = new ChatViewProvider(context.extensionUri, store, (message) => handleWebviewMessage(parts, message));
  const diffs = new InlineDiffs(store);
  const lenses = new PatchCodeLenses(store, diffs);
  const proposed = new ProposedFileProvider(store, diffs);
  const patches = new PatchActions(store, daemon, chat, proposed);
  const parts: Parts = { store, daemon, chat, view, patches, lenses };

  let traceLinkVersion = 0;
  const updateTraceLink = () => {
    const settings = daemonSettings(api.inspectSetting());
    const template = tracingEnabled(settings) ? traceUrlTemplate(api.setting('traceViewerUrl', ''), settings) : '';
    store.dispatch({ type: 'config', traceUrlTemplate: template });
    // Through the editor's proxy when it has one (code-server): the link then opens the trace.
    const version = ++traceLinkVersion;
    void externalTraceTemplate(template, api.asExternalUri).then((external) => {
      if (version === traceLinkVersion && external !== template) {
        store.dispatch({ type: 'config', traceUrlTemplate: external });
      }
    });
  };
  updateTraceLink();

  context.subscriptions.push(
    daemon,
    chat,
    view,
    diffs,
    lenses,
    proposed,
    new PatchStatusBar(store),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, view),
    vscode.languages.registerCodeLensProvider([{ scheme: 'file' }, { scheme: 'untitled' }], lenses),
    vscode.workspace.registerTextDocumentContentProvider(PATCH_SCHEME, proposed),
    ...registerCommands(parts),
    daemon.onReady(() => void patches.refresh()), // redraw patches after a reload or restart
    api.onDidGrantWorkspaceTrust(() => void daemon.restart()), // restricted until now
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      updateTraceLink();
      if (event.affectsConfiguration(`${SECTION}.pythonPath`) || daemon.current.state === 'error') {
        void offerRestart(daemon); // a new Python, or a chance to get out of an error
      } else {
        void daemon.sendSettings();
      }
    }),
  );
  running = daemon;
  void daemon.start();
}

async function offerRestart(daemon: Daemon): Promise<void> {
  if (!daemon.running) {
    await daemon.restart();
    return;
  }
  const choice = await api.showInfo('Smol Instruments: restart the daemon with the new Python?', 'Restart');
  if (choice === 'Restart') {
    await daemon.restart();
  }
}

/** Stop the daemon cleanly (shutdown + exit); the rest goes with context.subscriptions. */
export function deactivate(): Promise<void> | undefined {
  const daemon = running;
  running = undefined;
  return daemon?.stop();
}
