/** The number of pending agent patches in the status bar; a click lists them. */

import * as vscode from 'vscode';
import type { ChatStore } from '../chat/store';
import { COMMANDS } from '../commands/ids';
import * as api from '../vscodeapi';
import { pendingCount, statusBarText } from './patchState';

export class PatchStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };

  constructor(store: ChatStore) {
    this.item = vscode.window.createStatusBarItem('smolInstruments.patches', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Smol Instruments: pending patches';
    this.item.command = COMMANDS.showPatchDiff;
    this.item.tooltip = 'Pending agent patches: click to review one';
    this.subscription = store.subscribe((_a, state, previous) => {
      if (state.patches !== previous.patches) {
        this.update(state.patches);
      }
    });
    this.update(store.state.patches);
  }

  private update(patches: Parameters<typeof statusBarText>[0]): void {
    const text = statusBarText(patches);
    void api.setContext('smolInstruments.hasPendingPatches', pendingCount(patches) > 0);
    if (text === undefined) {
      this.item.hide();
      return;
    }
    this.item.text = text;
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
