/**
 * What the chat does: sends `smol/chat` for a conversation, streams `smol/event` into the store,
 * stops a run (cancelling the request's token sends `$/cancelRequest`), answers the daemon's
 * approval requests from a notification or the panel, whichever comes first.
 */

import * as vscode from 'vscode';
import type { Daemon } from '../client/daemon';
import { askAgainMessage } from '../edits/patchState';
import {
  DEFAULT_QUESTION,
  REQUEST_CANCELLED,
  type ApprovalAnswer,
  type CommandApproval,
  type Selection,
} from '../protocol';
import * as api from '../vscodeapi';
import { anyRunning, isRunning, runningTurn, type ContextRef } from './state';
import { newId, type ChatStore } from './store';

/** How long a stopped run may take to answer before the panel stops waiting for it. */
const STOP_GRACE_MS = 35_000;

interface InFlight {
  turnId: string;
  cts: vscode.CancellationTokenSource;
  stopTimer?: ReturnType<typeof setTimeout>;
}

type Answerer = (title: string | null, via: 'panel' | 'notification' | 'daemon') => void;

export class ChatController implements vscode.Disposable {
  private readonly inFlight = new Map<string, InFlight>();
  private readonly approvals = new Map<string, Answerer>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: ChatStore,
    private readonly daemon: Daemon,
  ) {
    this.disposables.push(
      daemon.onEvent((event) => store.dispatch({ type: 'event', event })),
      daemon.onDidChangeStatus((status) => store.dispatch({ type: 'daemon', status })),
    );
  }

  /** Send a message in a conversation (the active one by default); resolves when the run ends. */
  async send(text: string, selections: Selection[] = [], conversationId?: string): Promise<void> {
    const question = text.trim() || (selections.length ? DEFAULT_QUESTION : '');
    if (!question) {
      return;
    }
    let id = conversationId ?? this.store.state.activeId;
    if (isRunning(this.store.state, id)) {
      if (conversationId) {
        void api.showWarning('Smol Instruments: the agent is still working in that conversation. Stop it first, or wait.');
        return;
      }
      id = this.newConversation(); // the active one is busy: start another rather than wait
    }
    if (this.store.state.activeId !== id) {
      this.store.dispatch({ type: 'conversation/select', id });
    }
    const turnId = newId();
    this.store.dispatch({
      type: 'turn/start',
      conversationId: id,
      turnId,
      question,
      context: selections.map(contextRef),
      now: Date.now(),
    });
    const cts = new vscode.CancellationTokenSource();
    const flight: InFlight = { turnId, cts };
    this.inFlight.set(id, flight);
    this.updateRunningContext();
    try {
      const result = await this.daemon.chat({ sessionId: id, message: question, selections }, cts.token);
      this.store.dispatch({ type: 'turn/result', conversationId: id, turnId, result, now: Date.now() });
    } catch (error) {
      const cancelled = cts.token.isCancellationRequested || errorCode(error) === REQUEST_CANCELLED;
      this.store.dispatch({
        type: 'turn/failed',
        conversationId: id,
        turnId,
        message: errorMessage(error),
        cancelled,
        now: Date.now(),
      });
    } finally {
      if (flight.stopTimer) {
        clearTimeout(flight.stopTimer);
      }
      if (this.inFlight.get(id) === flight) {
        this.inFlight.delete(id);
      }
      cts.dispose();
      this.closeApprovalsOf(id, turnId);
      this.updateRunningContext();
    }
  }

  /** Stop the run of a conversation (the active one, else any running one). */
  stop(conversationId?: string): void {
    const state = this.store.state;
    const id =
      conversationId ??
      (isRunning(state, state.activeId) ? state.activeId : state.conversations.find((c) => runningTurn(c))?.id);
    if (!id) {
      return;
    }
    const flight = this.inFlight.get(id);
    if (!flight || flight.cts.token.isCancellationRequested) {
      return;
    }
    flight.cts.cancel(); // vscode-languageclient sends $/cancelRequest for the smol/chat request
    // A daemon that does not answer a cancelled request must not leave the panel spinning.
    flight.stopTimer = setTimeout(() => {
      this.store.dispatch({ type: 'turn/failed', conversationId: id, turnId: flight.turnId, message: 'Stopped.', cancelled: true, now: Date.now() });
      this.updateRunningContext();
    }, STOP_GRACE_MS);
  }

  newConversation(): string {
    const id = newId();
    this.store.dispatch({ type: 'conversation/new', id, now: Date.now() });
    return this.store.state.activeId;
  }

  select(id: string): void {
    this.store.dispatch({ type: 'conversation/select', id });
  }

  /** After a stale patch: ask the agent, in the conversation that made it, to propose it again. */
  async askAgain(patchId: string): Promise<void> {
    const patch = this.store.state.patches[patchId];
    if (!patch) {
      return;
    }
    const known = this.store.state.conversations.some((c) => c.id === patch.sessionId);
    const conversationId = known && patch.sessionId && !isRunning(this.store.state, patch.sessionId) ? patch.sessionId : undefined;
    await this.send(askAgainMessage(patch), [], conversationId);
  }

  // --- approvals ----------------------------------------------------------------------------

  /**
   * The daemon's `smol/approval`: shown as a notification (as VS Code would show a message
   * request) and in the chat panel; the first answer wins and is what the daemon gets.
   */
  approve(params: CommandApproval, token: vscode.CancellationToken): Promise<ApprovalAnswer | null> {
    const id = newId();
    const actions = params.actions;
    const state = this.store.state;
    const conversationId = isRunning(state, state.activeId)
      ? state.activeId
      : [...state.conversations].reverse().find((c) => runningTurn(c))?.id;
    this.store.dispatch({
      type: 'approval/ask',
      approval: {
        id,
        conversationId,
        message: params.message,
        actions,
        status: 'pending',
        command: params.command,
        rule: params.rule ?? undefined,
        reason: params.reason ?? undefined,
        widens: params.widens,
      },
    });
    return new Promise((resolve) => {
      let done = false;
      const answer: Answerer = (title, via) => {
        if (done) {
          return;
        }
        done = true;
        this.approvals.delete(id);
        this.store.dispatch({ type: 'approval/answer', id, answer: title, via });
        resolve(title === null ? null : { title });
      };
      this.approvals.set(id, answer);
      token.onCancellationRequested(() => answer(null, 'daemon'));
      void api.showWarning(params.message, ...actions).then((choice) => {
        // A notification closed without a choice is "no" only if the panel has not answered.
        answer(choice ?? null, 'notification');
      });
    });
  }

  answerApproval(approvalId: string, title: string): void {
    this.approvals.get(approvalId)?.(title, 'panel');
  }

  private closeApprovalsOf(conversationId: string, turnId: string): void {
    const conversation = this.store.state.conversations.find((c) => c.id === conversationId);
    const turn = conversation?.turns.find((t) => t.id === turnId);
    for (const approvalId of turn?.approvalIds ?? []) {
      this.approvals.get(approvalId)?.(null, 'daemon');
    }
  }

  private updateRunningContext(): void {
    void api.setContext('smolInstruments.running', anyRunning(this.store.state));
  }

  dispose(): void {
    for (const flight of this.inFlight.values()) {
      flight.cts.cancel();
    }
    for (const answer of [...this.approvals.values()]) {
      answer(null, 'daemon');
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

export function contextRef(selection: Selection): ContextRef {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(selection.uri));
  const uri = vscode.Uri.parse(selection.uri);
  const path = folder ? vscode.workspace.asRelativePath(uri, false) : uri.path.split('/').pop() ?? selection.uri;
  const { start, end } = selection.range;
  const endLine = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
  return { uri: selection.uri, path, startLine: start.line + 1, endLine };
}

function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : String(error);
}
