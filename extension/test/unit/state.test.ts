import { describe, expect, it } from 'vitest';
import {
  activeConversation,
  anyRunning,
  initialState,
  isRunning,
  pendingApprovals,
  progressText,
  reduce,
  type Action,
  type ChatState,
} from '../../src/chat/state';
import { events, fixRun, patch } from './fixtures';

function start(state: ChatState, conversationId = state.activeId, turnId = 't1', question = 'why does test_add fail?'): ChatState {
  return reduce(state, { type: 'turn/start', conversationId, turnId, question, context: [{ uri: 'file:///p/calc.py', path: 'calc.py', startLine: 4, endLine: 6 }], now: 1000 });
}

function feed(state: ChatState, list: ReturnType<typeof events>): ChatState {
  return list.reduce((s, event) => reduce(s, { type: 'event', event }), state);
}

describe('the chat reducer: events in order → what the panel shows', () => {
  it('builds steps with streamed text, code, tools, observations, the patch and the answer', () => {
    let state = start(initialState('s1', 0));
    state = feed(state, fixRun('s1'));
    const [turn] = activeConversation(state).turns;
    expect(turn.status).toBe('running'); // until smol/chat answers
    expect(turn.steps.map((s) => s.number)).toEqual([1, 2, 3]);
    expect(turn.steps[0].text).toBe('Thought: I will read calc.py.\n```python\nprint(read_file(path="calc.py"))\n```');
    expect(turn.steps[0].code).toBe('print(read_file(path="calc.py"))');
    expect(turn.steps[0].tools).toEqual([{ name: 'read_file', args: { path: 'calc.py' }, durationMs: 3.2, error: undefined }]);
    expect(turn.steps[0].observation).toEqual({ text: 'def add(a, b):\n    return a - b', truncated: false });
    expect(turn.patchIds).toEqual(['p1']);
    expect(state.patches.p1.status).toBe('pending');
    expect(turn.answer).toBe('add() subtracts; I proposed a patch.');
    expect(activeConversation(state).title).toBe('why does test_add fail?');
    expect(activeConversation(state).lastSeq).toBe(14);
  });

  it('finishes the turn with the smol/chat result: usage, steps, trace', () => {
    let state = feed(start(initialState('s1', 0)), fixRun('s1'));
    state = reduce(state, {
      type: 'turn/result',
      conversationId: 's1',
      turnId: 't1',
      result: { sessionId: 's1', status: 'completed', answer: 'add() subtracts; I proposed a patch.', steps: 3, usage: { promptTokens: 3204, completionTokens: 128 }, traceId: 'abc' },
      now: 9000,
    });
    const [turn] = activeConversation(state).turns;
    expect(turn).toMatchObject({ status: 'completed', stepCount: 3, traceId: 'abc', usage: { promptTokens: 3204, completionTokens: 128 }, endedAt: 9000 });
    expect(isRunning(state)).toBe(false);
  });

  it('shows what the run waits for, with the percent, until the model writes', () => {
    let state = start(initialState('s1', 0));
    const progress = (seq: number, stage: 'model' | 'prompt', message: string, percent?: number) =>
      reduce(state, { type: 'event', event: { sessionId: 's1', seq, kind: 'progress', stage, message, ...(percent === undefined ? {} : { percent }) } });
    state = progress(1, 'model', 'starting the local model');
    expect(progressText(activeConversation(state).turns[0])).toBe('Starting the local model');
    state = progress(2, 'model', 'the model is reading its instructions (870 tokens)', 40);
    expect(progressText(activeConversation(state).turns[0])).toBe('The model is reading its instructions (870 tokens) — 40 %');
    state = reduce(state, { type: 'event', event: { sessionId: 's1', seq: 3, kind: 'step', step: 1, maxSteps: 6 } });
    // What was read for step 1 is shown while the model still reads: the line stays.
    state = reduce(state, { type: 'event', event: { sessionId: 's1', seq: 4, kind: 'tool', step: 1, name: 'context', args: {}, durationMs: 3 } });
    expect(progressText(activeConversation(state).turns[0])).toBe('The model is reading its instructions (870 tokens) — 40 %');
    state = progress(5, 'prompt', 'reading 1,100 tokens', 100);
    expect(progressText(activeConversation(state).turns[0])).toBe('Reading 1,100 tokens — 100 %');
    state = reduce(state, { type: 'event', event: { sessionId: 's1', seq: 6, kind: 'text', text: 'The' } });
    expect(activeConversation(state).turns[0].progress).toBeUndefined();
    expect(progressText(activeConversation(state).turns[0])).toBeUndefined();
  });

  it('ignores duplicate and out-of-date events (seq)', () => {
    const run = fixRun('s1');
    let state = feed(start(initialState('s1', 0)), run.slice(0, 3));
    const before = state;
    state = feed(state, [run[1], run[2]]);
    expect(state).toBe(before);
  });

  it('routes events by sessionId and leaves other conversations alone', () => {
    let state = initialState('a', 0);
    state = start(state, 'a', 'ta');
    state = reduce(state, { type: 'conversation/new', id: 'b', now: 1 });
    state = start(state, 'b', 'tb', 'other');
    state = feed(state, events('b', [{ kind: 'step', step: 1, maxSteps: 5 }, { kind: 'text', text: 'hello' }]));
    const a = state.conversations.find((c) => c.id === 'a')!;
    const b = state.conversations.find((c) => c.id === 'b')!;
    expect(a.turns[0].steps).toEqual([]);
    expect(b.turns[0].steps[0].text).toBe('hello');
    expect(anyRunning(state)).toBe(true);
  });

  it('keeps the patches of runs it does not know (another client) but no turn for them', () => {
    const state = feed(initialState('mine', 0), events('elsewhere', [{ kind: 'patch', patch: patch({ id: 'px', sessionId: 'elsewhere' }) }]));
    expect(state.patches.px.status).toBe('pending');
    expect(state.conversations).toHaveLength(1);
  });

  it('shows a step error inside its step, with the recovery suggestion', () => {
    let state = start(initialState('s1', 0));
    state = feed(
      state,
      events('s1', [
        { kind: 'step', step: 1, maxSteps: 25 },
        { kind: 'tool', step: 1, name: 'read_file', args: { path: 'nope.py' }, durationMs: 1, error: { error: 'FILE_NOT_FOUND', message: 'no such file', tool: 'read_file', context: {}, recovery_suggestion: 'Did you mean calc.py?' } },
        { kind: 'error', message: 'Code execution failed', recoverySuggestion: 'Check the argument names' },
        { kind: 'step', step: 2, maxSteps: 25 },
        { kind: 'final', answer: 'ok', status: 'completed' },
      ]),
    );
    const [turn] = activeConversation(state).turns;
    expect(turn.steps[0].errors).toEqual([{ message: 'Code execution failed', recoverySuggestion: 'Check the argument names' }]);
    expect(turn.steps[0].tools[0].error?.recovery_suggestion).toBe('Did you mean calc.py?');
    expect(turn.failure).toBeUndefined();
  });

  it("lifts the run's own failure (the error right before a failed final) out of the step", () => {
    let state = start(initialState('s1', 0));
    state = feed(
      state,
      events('s1', [
        { kind: 'step', step: 1, maxSteps: 25 },
        { kind: 'error', message: 'The model server did not answer', recoverySuggestion: 'Start it: ollama serve' },
        { kind: 'final', answer: 'The model server did not answer', status: 'failed' },
      ]),
    );
    const [turn] = activeConversation(state).turns;
    expect(turn.failure).toEqual({ message: 'The model server did not answer', recoverySuggestion: 'Start it: ollama serve' });
    expect(turn.steps[0].errors).toEqual([]);
  });

  it('marks a stopped turn cancelled, and a broken request failed', () => {
    let state = start(initialState('s1', 0));
    state = reduce(state, { type: 'turn/failed', conversationId: 's1', turnId: 't1', message: 'cancelled', cancelled: true, now: 5 });
    expect(activeConversation(state).turns[0]).toMatchObject({ status: 'cancelled', answer: 'Cancelled.' });
    state = start(state, 's1', 't2');
    state = reduce(state, { type: 'turn/failed', conversationId: 's1', turnId: 't2', message: 'the daemon stopped', cancelled: false, now: 6 });
    expect(activeConversation(state).turns[1]).toMatchObject({ status: 'failed', failure: { message: 'the daemon stopped' } });
  });

  it('ignores a late result for a turn already finished by a stop', () => {
    let state = start(initialState('s1', 0));
    state = reduce(state, { type: 'turn/failed', conversationId: 's1', turnId: 't1', message: 'Stopped.', cancelled: true, now: 5 });
    const stopped = state;
    state = reduce(state, { type: 'turn/failed', conversationId: 's1', turnId: 't1', message: 'late', cancelled: false, now: 6 });
    expect(activeConversation(state).turns[0]).toEqual(activeConversation(stopped).turns[0]);
  });
});

describe('conversations and history', () => {
  it('does not pile up empty conversations', () => {
    let state = initialState('a', 0);
    state = reduce(state, { type: 'conversation/new', id: 'b', now: 1 });
    expect(state.conversations.map((c) => c.id)).toEqual(['a']);
  });

  it('starts a new one after a turn and can go back to an old one', () => {
    let state = start(initialState('a', 0));
    state = reduce(state, { type: 'conversation/new', id: 'b', now: 1 });
    expect(state.activeId).toBe('b');
    state = reduce(state, { type: 'conversation/select', id: 'a' });
    expect(state.activeId).toBe('a');
    state = reduce(state, { type: 'conversation/select', id: 'zzz' });
    expect(state.activeId).toBe('a');
  });
});

describe('approvals', () => {
  const message = 'The agent wants to run: pip install requests\nPolicy ask.package-install: installs packages from the network';

  function asked(): ChatState {
    const state = start(initialState('s1', 0));
    return reduce(state, { type: 'approval/ask', approval: { id: 'ap1', conversationId: 's1', message, actions: ['Run', 'Deny'], status: 'pending', command: 'pip install requests', rule: 'ask.package-install', reason: 'installs packages from the network' } });
  }

  it('attaches a prompt to the running turn, then records the answer once', () => {
    let state = asked();
    expect(activeConversation(state).turns[0].approvalIds).toEqual(['ap1']);
    expect(pendingApprovals(state)).toHaveLength(1);
    state = reduce(state, { type: 'approval/answer', id: 'ap1', answer: 'Deny', via: 'panel' });
    expect(state.approvals.ap1).toMatchObject({ status: 'answered', answer: 'Deny', answeredIn: 'panel' });
    const after = reduce(state, { type: 'approval/answer', id: 'ap1', answer: 'Run', via: 'notification' });
    expect(after).toBe(state); // the first answer wins
  });

  it("is closed by the daemon's approval event (e.g. after its timeout)", () => {
    let state = asked();
    state = feed(state, events('s1', [{ kind: 'step', step: 1, maxSteps: 5 }, { kind: 'approval', command: 'pip install requests', verdict: 'require_approval', rule: 'ask.package-install', decision: 'denied', contained: true, widens: ['network'] }]));
    expect(state.approvals.ap1).toMatchObject({ status: 'answered', answer: 'Deny', answeredIn: 'daemon' });
    expect(activeConversation(state).turns[0].steps[0].approvals).toEqual([{ command: 'pip install requests', rule: 'ask.package-install', verdict: 'require_approval', decision: 'denied' }]);
  });

  it('expires prompts still open when the turn ends', () => {
    let state = asked();
    state = reduce(state, { type: 'turn/result', conversationId: 's1', turnId: 't1', result: { sessionId: 's1', status: 'completed', answer: 'x', steps: 1, usage: { promptTokens: 1, completionTokens: 1 } }, now: 2 });
    expect(state.approvals.ap1.status).toBe('expired');
  });
});

describe('patches', () => {
  it('replaces the list from smol/patches but keeps resolved ones the turns show', () => {
    let state = feed(start(initialState('s1', 0)), fixRun('s1'));
    state = reduce(state, { type: 'event', event: { kind: 'patch', sessionId: 's1', seq: 99, patch: patch({ id: 'old', status: 'rejected' }) } });
    const listed = [patch({ id: 'p2', status: 'pending' })];
    state = reduce(state, { type: 'patches/replace', patches: listed });
    expect(Object.keys(state.patches).sort()).toEqual(['old', 'p2']); // p1 (pending, gone from the daemon) is dropped
  });

  it('keeps the same patches object when nothing about patches changed', () => {
    const state = start(initialState('s1', 0));
    const next = reduce(state, { type: 'event', event: { kind: 'step', sessionId: 's1', seq: 1, step: 1, maxSteps: 5 } });
    expect(next.patches).toBe(state.patches);
  });
});

describe('the reducer is total', () => {
  it('returns the state unchanged for an unknown action', () => {
    const state = initialState('s1', 0);
    expect(reduce(state, { type: 'nope' } as unknown as Action)).toBe(state);
  });
});
