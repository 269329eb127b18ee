import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { ChatController } from '../../src/chat/controller';
import { activeConversation, initialState } from '../../src/chat/state';
import { ChatStore } from '../../src/chat/store';
import type { Daemon } from '../../src/client/daemon';
import type { ChatParams, ChatResult, CommandApproval, SmolEvent } from '../../src/protocol';

/** A daemon double: records smol/chat calls and lets the test answer them. */
function fakeDaemon() {
  const eventListeners: Array<(e: SmolEvent) => void> = [];
  const calls: Array<{ params: ChatParams; token: vscode.CancellationToken; resolve: (r: ChatResult) => void; reject: (e: unknown) => void }> = [];
  const daemon = {
    onEvent: (listener: (e: SmolEvent) => void) => {
      eventListeners.push(listener);
      return { dispose: () => undefined };
    },
    onDidChangeStatus: () => ({ dispose: () => undefined }),
    chat: (params: ChatParams, token: vscode.CancellationToken) =>
      new Promise<ChatResult>((resolve, reject) => {
        calls.push({ params, token, resolve, reject });
      }),
  };
  return { daemon: daemon as unknown as Daemon, calls, emit: (e: SmolEvent) => eventListeners.forEach((l) => l(e)) };
}

const result = (sessionId: string, status: ChatResult['status'] = 'completed'): ChatResult => ({
  sessionId,
  status,
  answer: 'done',
  steps: 1,
  usage: { promptTokens: 10, completionTokens: 2 },
});

const flush = () => new Promise((r) => setTimeout(r, 0));

describe('ChatController', () => {
  let store: ChatStore;
  beforeEach(() => {
    store = new ChatStore(initialState('conv1', 0));
    vi.mocked(vscode.window.showWarningMessage).mockReset();
  });

  it('sends smol/chat with the conversation id as sessionId and the selection', async () => {
    const { daemon, calls, emit } = fakeDaemon();
    const chat = new ChatController(store, daemon);
    const selection = { uri: 'file:///p/calc.py', range: { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } }, text: 'def add' };
    const done = chat.send('why?', [selection]);
    await flush();
    expect(calls[0].params).toEqual({ sessionId: 'conv1', message: 'why?', selections: [selection] });
    emit({ kind: 'step', sessionId: 'conv1', seq: 1, step: 1, maxSteps: 5 });
    expect(activeConversation(store.state).turns[0].steps).toHaveLength(1);
    calls[0].resolve(result('conv1'));
    await done;
    expect(activeConversation(store.state).turns[0].status).toBe('completed');
    expect(activeConversation(store.state).turns[0].context[0]).toMatchObject({ startLine: 4, endLine: 6 });
  });

  it('uses the default question for a selection sent without one', async () => {
    const { daemon, calls } = fakeDaemon();
    const chat = new ChatController(store, daemon);
    void chat.send('  ', [{ uri: 'file:///a.py', range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, text: 'x' }]);
    await flush();
    expect(calls[0].params.message).toBe('Explain this code and point out problems.');
  });

  it('stops a run by cancelling its request token ($/cancelRequest)', async () => {
    const { daemon, calls } = fakeDaemon();
    const chat = new ChatController(store, daemon);
    const done = chat.send('think');
    await flush();
    chat.stop();
    expect(calls[0].token.isCancellationRequested).toBe(true);
    calls[0].resolve(result('conv1', 'cancelled'));
    await done;
    expect(activeConversation(store.state).turns[0].status).toBe('cancelled');
  });

  it('treats a RequestCancelled error as a cancel, other errors as a failure', async () => {
    const { daemon, calls } = fakeDaemon();
    const chat = new ChatController(store, daemon);
    const first = chat.send('one');
    await flush();
    calls[0].reject({ code: -32800, message: 'Request cancelled' });
    await first;
    expect(activeConversation(store.state).turns[0].status).toBe('cancelled');
    const second = chat.send('two');
    await flush();
    calls[1].reject(new Error('Connection got disposed.'));
    await second;
    expect(activeConversation(store.state).turns[1]).toMatchObject({ status: 'failed', failure: { message: 'Connection got disposed.' } });
  });

  it('starts a new conversation when the active one is busy', async () => {
    const { daemon, calls } = fakeDaemon();
    const chat = new ChatController(store, daemon);
    void chat.send('first');
    await flush();
    void chat.send('second');
    await flush();
    expect(calls.map((c) => c.params.sessionId)[0]).toBe('conv1');
    expect(calls[1].params.sessionId).not.toBe('conv1');
    expect(store.state.conversations).toHaveLength(2);
  });

  describe('approvals: notification and panel, first answer wins', () => {
    const params: CommandApproval = {
      command: 'pip install requests',
      rule: 'approval.package-install',
      reason: 'installs packages from the network',
      widens: ['network'],
      message: 'The agent wants to run: pip install requests\nPolicy approval.package-install: installs packages from the network',
      actions: ['Run', 'Deny'],
    };

    it('answers the daemon from the panel and ignores the notification after', async () => {
      let answerNotification: (v: string | undefined) => void = () => undefined;
      vi.mocked(vscode.window.showWarningMessage).mockImplementation((() => new Promise((r) => (answerNotification = r))) as never);
      const { daemon } = fakeDaemon();
      const chat = new ChatController(store, daemon);
      void chat.send('install it');
      await flush();
      const source = new vscode.CancellationTokenSource();
      const answer = chat.approve(params, source.token);
      expect(vscode.window.showWarningMessage).toHaveBeenCalledWith(params.message, 'Run', 'Deny');
      const [approval] = Object.values(store.state.approvals);
      expect(approval).toMatchObject({ status: 'pending', command: 'pip install requests', rule: 'approval.package-install', widens: ['network'], conversationId: 'conv1' });
      expect(activeConversation(store.state).turns[0].approvalIds).toEqual([approval.id]);
      chat.answerApproval(approval.id, 'Deny');
      await expect(answer).resolves.toEqual({ title: 'Deny' });
      answerNotification('Run');
      await flush();
      expect(store.state.approvals[approval.id]).toMatchObject({ status: 'answered', answer: 'Deny', answeredIn: 'panel' });
    });

    it('answers from the notification too', async () => {
      vi.mocked(vscode.window.showWarningMessage).mockImplementation((() => Promise.resolve('Run')) as never);
      const { daemon } = fakeDaemon();
      const chat = new ChatController(store, daemon);
      const answer = await chat.approve(params, new vscode.CancellationTokenSource().token);
      expect(answer).toEqual({ title: 'Run' });
      expect(Object.values(store.state.approvals)[0]).toMatchObject({ answeredIn: 'notification', answer: 'Run' });
    });

    it('a dismissed notification is no (as VS Code itself would answer)', async () => {
      vi.mocked(vscode.window.showWarningMessage).mockImplementation((() => Promise.resolve(undefined)) as never);
      const { daemon } = fakeDaemon();
      const chat = new ChatController(store, daemon);
      await expect(chat.approve(params, new vscode.CancellationTokenSource().token)).resolves.toBeNull();
    });
  });
});
