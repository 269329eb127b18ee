/**
 * Accept, reject, review: the user's decisions on patches, carried out by the daemon.
 *
 * Accept runs the daemon's `smol.acceptPatch` for the whole patch or chosen hunks; the daemon
 * places them in the buffer and sends `workspace/applyEdit`, so the change lands in the
 * editor's undo history, and the patch's other hunks stay pending. Then the file is saved,
 * unless it had unsaved changes of the user's before (setting saveAfterAccept). A hunk whose
 * lines changed is stale: nothing is written for it, the user is told and offered to ask again.
 */

import * as vscode from 'vscode';
import type { ChatController } from '../chat/controller';
import { errorMessage } from '../chat/controller';
import type { ChatStore } from '../chat/store';
import type { Daemon } from '../client/daemon';
import { DAEMON_ACCEPT_PATCH, DAEMON_REJECT_PATCH, type Patch, type PatchCommandResult } from '../protocol';
import * as api from '../vscodeapi';
import type { ProposedFileProvider } from './diffProvider';
import { filePath, pendingPatches, sameUri, staleExplanation, staleHunksExplanation } from './patchState';
import { visible } from '../visible';

export interface AcceptOutcome {
  status: 'accepted' | 'stale' | 'failed' | 'skipped';
  message?: string;
  /** Hunks that were stale while the others were written. */
  staleHunks?: number[];
}

export class PatchActions {
  constructor(
    private readonly store: ChatStore,
    private readonly daemon: Daemon,
    private readonly chat: ChatController,
    private readonly proposed: ProposedFileProvider,
  ) {}

  /** Fetch `smol/patches` (after a reload, a daemon restart, or a decision). */
  async refresh(): Promise<void> {
    try {
      const patches = await this.daemon.patches();
      this.store.dispatch({ type: 'patches/replace', patches });
    } catch (error) {
      this.daemon.output.warn(`smol/patches: ${errorMessage(error)}`);
    }
  }

  async accept(patchId: string, hunks?: number[], quiet = false): Promise<AcceptOutcome> {
    const patch = this.store.state.patches[patchId];
    if (patch && patch.status !== 'pending') {
      if (!quiet) {
        void api.showInfo(`Smol Instruments: the patch "${patch.summary}" is already ${patch.status}.`);
      }
      return { status: 'skipped' };
    }
    const dirtyBefore = new Set(
      vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()),
    );
    let decision: PatchCommandResult | undefined;
    try {
      decision = (await this.daemon.executeCommand(DAEMON_ACCEPT_PATCH, hunks ? [patchId, { hunks }] : [patchId])) as PatchCommandResult;
    } catch (error) {
      const message = errorMessage(error);
      await this.refresh();
      const now = this.store.state.patches[patchId];
      if (now?.status === 'stale' || /stale/i.test(message)) {
        if (!quiet) {
          this.offerAskAgain(now ?? patch, message);
        }
        return { status: 'stale', message };
      }
      if (!quiet) {
        void api.showError(`Smol Instruments: ${message}`);
      }
      return { status: 'failed', message };
    }
    if (patch && api.setting('saveAfterAccept', true)) {
      await this.save(patch, dirtyBefore);
    }
    await this.refresh();
    const staleHunks = decision?.stale ?? [];
    if (staleHunks.length && patch && !quiet) {
      void api.showWarning(`Smol Instruments: ${staleHunksExplanation(patch, staleHunks)}`, 'Ask the agent again').then((choice) => {
        if (choice === 'Ask the agent again') {
          void this.chat.askAgain(patch.id);
        }
      });
    }
    return { status: 'accepted', staleHunks };
  }

  private async save(patch: Patch, dirtyBefore: Set<string>): Promise<void> {
    for (const file of patch.files) {
      const document = vscode.workspace.textDocuments.find((d) => sameUri(d.uri.toString(), file.uri));
      if (!document || !document.isDirty) {
        continue;
      }
      if ([...dirtyBefore].some((uri) => sameUri(uri, file.uri))) {
        continue; // the user's own unsaved changes: theirs to save
      }
      try {
        await document.save();
      } catch (error) {
        this.daemon.output.warn(`saving ${filePath(file)}: ${errorMessage(error)}`);
      }
    }
  }

  private offerAskAgain(patch: Patch | undefined, message: string): void {
    const text = patch ? staleExplanation(patch) : message;
    void api.showWarning(`Smol Instruments: ${text}`, 'Ask the agent again').then((choice) => {
      if (choice === 'Ask the agent again' && patch) {
        void this.chat.askAgain(patch.id);
      }
    });
  }

  async reject(patchId: string, quiet = false, hunks?: number[]): Promise<boolean> {
    try {
      await this.daemon.executeCommand(DAEMON_REJECT_PATCH, hunks ? [patchId, { hunks }] : [patchId]);
      return true;
    } catch (error) {
      if (!quiet) {
        void api.showError(`Smol Instruments: ${errorMessage(error)}`);
      }
      return false;
    } finally {
      await this.refresh();
    }
  }

  async acceptAll(): Promise<void> {
    const pending = pendingPatches(this.store.state.patches);
    if (pending.length === 0) {
      void api.showInfo('Smol Instruments: no pending patches.');
      return;
    }
    const outcomes = [];
    for (const patch of pending) {
      outcomes.push(await this.accept(patch.id, undefined, true));
    }
    const accepted = outcomes.filter((o) => o.status === 'accepted').length;
    const stale = outcomes.filter((o) => o.status === 'stale').length;
    const failed = outcomes.filter((o) => o.status === 'failed');
    const parts = [`accepted ${accepted} of ${pending.length}`];
    if (stale) {
      parts.push(`${stale} stale (their files changed; nothing written)`);
    }
    if (failed.length) {
      parts.push(`${failed.length} failed: ${failed[0].message ?? ''}`);
    }
    const text = `Smol Instruments: ${parts.join('; ')}.`;
    void (stale || failed.length ? api.showWarning(text) : api.showInfo(text));
  }

  async rejectAll(): Promise<void> {
    const pending = pendingPatches(this.store.state.patches);
    let rejected = 0;
    for (const patch of pending) {
      if (await this.reject(patch.id, true)) {
        rejected += 1;
      }
    }
    void api.showInfo(`Smol Instruments: rejected ${rejected} patch${rejected === 1 ? '' : 'es'}; nothing was written.`);
  }

  async showDiff(patchId: string, fileIndex = 0): Promise<void> {
    const patch = this.store.state.patches[patchId];
    if (patch) {
      await this.proposed.show(patch, fileIndex);
    }
  }

  /** Let the user pick a pending patch (palette commands without an argument, status bar). */
  async pick(placeHolder: string): Promise<string | undefined> {
    const pending = pendingPatches(this.store.state.patches);
    if (pending.length === 0) {
      void api.showInfo('Smol Instruments: no pending patches.');
      return undefined;
    }
    if (pending.length === 1) {
      return pending[0].id;
    }
    const choice = await vscode.window.showQuickPick(
      pending.map((p) => ({ label: visible(p.summary, { breaks: true }), description: visible(p.files.map(filePath).join(', ')), id: p.id })),
      { placeHolder },
    );
    return choice?.id;
  }
}
