/**
 * The chat panel's state and the one reducer that changes it.
 *
 * The extension host owns the state and forwards every action to the webview, which runs the
 * same reducer: the panel can be hidden, reloaded or reopened and gets a snapshot. No `vscode`
 * import: the webview bundle and the unit tests use this file as is.
 */

import type {
  ChatResult,
  ErrorObject,
  Patch,
  RunStatus,
  SmolEvent,
  Usage,
} from '../protocol';

export type TurnStatus = 'running' | RunStatus;

export interface ContextRef {
  uri: string;
  /** Workspace-relative path, for display. */
  path: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
}

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
  durationMs: number;
  error?: ErrorObject;
}

export interface StepError {
  message: string;
  recoverySuggestion?: string;
}

export interface ApprovalNote {
  command: string;
  rule: string | null;
  verdict: string;
  decision: 'approved' | 'denied' | 'auto';
}

export interface Step {
  number: number;
  maxSteps: number;
  /** The model's streamed output of this step (thoughts and code, markdown). */
  text: string;
  code?: string;
  tools: ToolCall[];
  observation?: { text: string; truncated: boolean };
  errors: StepError[];
  approvals: ApprovalNote[];
}

export interface Turn {
  id: string;
  question: string;
  context: ContextRef[];
  status: TurnStatus;
  steps: Step[];
  answer?: string;
  /** A failure of the run itself (not a step the agent recovered from). */
  failure?: StepError;
  usage?: Usage;
  stepCount?: number;
  traceId?: string;
  patchIds: string[];
  approvalIds: string[];
  startedAt: number;
  endedAt?: number;
  /** Kind of the last event, to tell a run's failure from a step's error. */
  lastKind?: string;
  /** What the run waits for before the model's next word (the model getting ready, or
   * reading its prompt); gone once the model writes. */
  progress?: { stage: 'model' | 'prompt'; message: string; percent?: number };
}

export interface Conversation {
  /** Also the daemon's sessionId: the extension picks it, so events can be routed at once. */
  id: string;
  title: string;
  createdAt: number;
  turns: Turn[];
  lastSeq: number;
}

export type ApprovalStatus = 'pending' | 'answered' | 'expired';

export interface Approval {
  id: string;
  conversationId?: string;
  message: string;
  command?: string;
  rule?: string;
  reason?: string;
  /** What approving also lets the command do beyond its containment, e.g. ['network']. */
  widens?: string[];
  actions: string[];
  status: ApprovalStatus;
  answer?: string;
  answeredIn?: 'panel' | 'notification' | 'daemon';
}

export type DaemonState = 'starting' | 'running' | 'restarting' | 'stopped' | 'error';

export interface DaemonStatus {
  state: DaemonState;
  message?: string;
  /** Running in restricted mode: the folder is not trusted, so no command runs. */
  restricted?: boolean;
}

export interface ChatState {
  conversations: Conversation[];
  activeId: string;
  patches: Record<string, Patch>;
  approvals: Record<string, Approval>;
  daemon: DaemonStatus;
  /** Trace link template with `{traceId}`; empty when tracing is off. */
  traceUrlTemplate: string;
  /** Text put into the input box (ask about selection), with a counter so it applies once. */
  draft?: { text: string; nonce: number };
}

export type Action =
  | { type: 'conversation/new'; id: string; now: number }
  | { type: 'conversation/select'; id: string }
  | {
      type: 'turn/start';
      conversationId: string;
      turnId: string;
      question: string;
      context: ContextRef[];
      now: number;
    }
  | { type: 'event'; event: SmolEvent }
  | { type: 'turn/result'; conversationId: string; turnId: string; result: ChatResult; now: number }
  | {
      type: 'turn/failed';
      conversationId: string;
      turnId: string;
      message: string;
      cancelled: boolean;
      now: number;
    }
  | { type: 'patches/replace'; patches: Patch[] }
  | { type: 'patch/update'; patch: Patch }
  | { type: 'approval/ask'; approval: Approval }
  | { type: 'approval/answer'; id: string; answer: string | null; via: 'panel' | 'notification' | 'daemon' }
  | { type: 'daemon'; status: DaemonStatus }
  | { type: 'config'; traceUrlTemplate: string }
  | { type: 'draft'; text: string; nonce: number };

export function initialState(conversationId: string, now: number): ChatState {
  return {
    conversations: [newConversation(conversationId, now)],
    activeId: conversationId,
    patches: {},
    approvals: {},
    daemon: { state: 'starting' },
    traceUrlTemplate: '',
  };
}

function newConversation(id: string, now: number): Conversation {
  return { id, title: 'New conversation', createdAt: now, turns: [], lastSeq: 0 };
}

export function activeConversation(state: ChatState): Conversation {
  return state.conversations.find((c) => c.id === state.activeId) ?? state.conversations[state.conversations.length - 1];
}

export function runningTurn(conversation: Conversation | undefined): Turn | undefined {
  const last = conversation?.turns[conversation.turns.length - 1];
  return last && last.status === 'running' ? last : undefined;
}

export function isRunning(state: ChatState, conversationId = state.activeId): boolean {
  return runningTurn(state.conversations.find((c) => c.id === conversationId)) !== undefined;
}

export function anyRunning(state: ChatState): boolean {
  return state.conversations.some((c) => runningTurn(c) !== undefined);
}

export function pendingApprovals(state: ChatState): Approval[] {
  return Object.values(state.approvals).filter((a) => a.status === 'pending');
}

function titleOf(question: string): string {
  const line = question.split('\n').find((l) => l.trim()) ?? question;
  const trimmed = line.trim();
  return trimmed.length > 60 ? `${trimmed.slice(0, 57)}...` : trimmed || 'Conversation';
}

// --- immutable helpers: the webview re-renders only what changed ---------------------------

function updateConversation(
  state: ChatState,
  id: string,
  update: (c: Conversation) => Conversation,
): ChatState {
  let changed = false;
  const conversations = state.conversations.map((c) => {
    if (c.id !== id) {
      return c;
    }
    const next = update(c);
    changed = changed || next !== c;
    return next;
  });
  return changed ? { ...state, conversations } : state;
}

function updateTurn(conversation: Conversation, turnId: string, update: (t: Turn) => Turn): Conversation {
  const index = conversation.turns.findIndex((t) => t.id === turnId);
  if (index < 0) {
    return conversation;
  }
  const turns = conversation.turns.slice();
  turns[index] = update(turns[index]);
  return { ...conversation, turns };
}

function updateLastStep(turn: Turn, update: (s: Step) => Step, stepNumber?: number): Turn {
  let steps = turn.steps;
  if (steps.length === 0) {
    steps = [emptyStep(stepNumber ?? 1, 0)];
  }
  let index = steps.length - 1;
  if (stepNumber !== undefined) {
    const found = steps.findIndex((s) => s.number === stepNumber);
    if (found >= 0) {
      index = found;
    }
  }
  const next = steps.slice();
  next[index] = update(next[index]);
  return { ...turn, steps: next };
}

function emptyStep(number: number, maxSteps: number): Step {
  return { number, maxSteps, text: '', tools: [], errors: [], approvals: [] };
}

function finishApprovals(state: ChatState, turn: Turn): Record<string, Approval> {
  let approvals = state.approvals;
  for (const id of turn.approvalIds) {
    const approval = approvals[id];
    if (approval && approval.status === 'pending') {
      approvals = { ...approvals, [id]: { ...approval, status: 'expired' } };
    }
  }
  return approvals;
}

function upsertPatch(patches: Record<string, Patch>, patch: Patch): Record<string, Patch> {
  return { ...patches, [patch.id]: patch };
}

// --- events -------------------------------------------------------------------------------

function applyEvent(state: ChatState, event: SmolEvent): ChatState {
  let next = state;
  if (event.kind === 'patch') {
    next = { ...next, patches: upsertPatch(next.patches, event.patch) };
  }
  if (event.kind === 'approval' && event.decision !== 'auto') {
    // The daemon's record of a decision closes a prompt still open (e.g. it timed out).
    const open = pendingApprovals(next).find((a) => a.command === event.command);
    if (open) {
      const answer = event.decision === 'approved' ? 'Run' : 'Deny';
      next = { ...next, approvals: { ...next.approvals, [open.id]: { ...open, status: 'answered', answer, answeredIn: 'daemon' } } };
    }
  }
  const conversation = next.conversations.find((c) => c.id === event.sessionId);
  if (!conversation) {
    return next; // a run started by another client: its patches still count
  }
  if (event.seq <= conversation.lastSeq) {
    return next; // duplicate or out of date
  }
  const turn = runningTurn(conversation);
  return updateConversation(next, conversation.id, (c) => {
    const withSeq = { ...c, lastSeq: event.seq };
    if (!turn) {
      return withSeq;
    }
    return updateTurn(withSeq, turn.id, (t) => ({ ...turnEvent(t, event), lastKind: event.kind }));
  });
}

/** Events after which the model is no longer waited for: the progress line goes. (Not
 * `tool`: step 1 opens with what was read for it, while the model still reads its prompt.) */
const PROGRESS_ENDS = new Set<SmolEvent['kind']>(['text', 'code', 'observation', 'error', 'final']);

/** The running turn's progress line: "reading 1,100 tokens — 40 %", or undefined. */
export function progressText(turn: Turn): string | undefined {
  const progress = turn.progress;
  if (!progress) {
    return undefined;
  }
  const percent = progress.percent !== undefined ? ` — ${progress.percent} %` : '';
  const message = progress.message.charAt(0).toUpperCase() + progress.message.slice(1);
  return `${message}${percent}`;
}

function turnEvent(turn: Turn, event: SmolEvent): Turn {
  if (turn.progress && PROGRESS_ENDS.has(event.kind)) {
    turn = { ...turn, progress: undefined };
  }
  switch (event.kind) {
    case 'progress': {
      const progress: NonNullable<Turn['progress']> = { stage: event.stage, message: event.message };
      if (typeof event.percent === 'number') {
        progress.percent = event.percent;
      }
      return { ...turn, progress };
    }
    case 'step':
      if (turn.steps.some((s) => s.number === event.step)) {
        return turn;
      }
      return { ...turn, steps: [...turn.steps, emptyStep(event.step, event.maxSteps)] };
    case 'text':
      return updateLastStep(turn, (s) => ({ ...s, text: s.text + event.text }));
    case 'code':
      return updateLastStep(turn, (s) => ({ ...s, code: event.code }), event.step);
    case 'tool':
      return updateLastStep(
        turn,
        (s) => ({
          ...s,
          tools: [...s.tools, { name: event.name, args: event.args ?? {}, durationMs: event.durationMs, error: event.error }],
        }),
        event.step || undefined,
      );
    case 'observation':
      return updateLastStep(turn, (s) => ({ ...s, observation: { text: event.text, truncated: event.truncated } }), event.step);
    case 'error': {
      const error: StepError = { message: event.message };
      if (event.recoverySuggestion) {
        error.recoverySuggestion = event.recoverySuggestion;
      }
      if (turn.steps.length === 0) {
        return { ...turn, failure: error };
      }
      return updateLastStep(turn, (s) => ({ ...s, errors: [...s.errors, error] }));
    }
    case 'approval': {
      if (event.decision === 'auto') {
        return turn;
      }
      const note: ApprovalNote = { command: event.command, rule: event.rule, verdict: event.verdict, decision: event.decision };
      return updateLastStep(turn, (s) => ({ ...s, approvals: [...s.approvals, note] }));
    }
    case 'patch':
      return turn.patchIds.includes(event.patch.id) ? turn : { ...turn, patchIds: [...turn.patchIds, event.patch.id] };
    case 'final': {
      let next: Turn = { ...turn, answer: event.answer };
      if (event.status === 'failed' && turn.lastKind === 'error' && !turn.failure) {
        // The run's own failure is the error event right before "final": lift it out of the step.
        const last = turn.steps[turn.steps.length - 1];
        const failure = last?.errors[last.errors.length - 1];
        if (failure) {
          next = updateLastStep(next, (s) => ({ ...s, errors: s.errors.slice(0, -1) }));
          next.failure = failure;
        }
      }
      return next;
    }
    default:
      return turn;
  }
}

// --- the reducer --------------------------------------------------------------------------

export function reduce(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case 'conversation/new': {
      const current = activeConversation(state);
      if (current && current.turns.length === 0) {
        return state.activeId === current.id ? state : { ...state, activeId: current.id };
      }
      return {
        ...state,
        conversations: [...state.conversations, newConversation(action.id, action.now)],
        activeId: action.id,
      };
    }
    case 'conversation/select':
      return state.conversations.some((c) => c.id === action.id) ? { ...state, activeId: action.id } : state;
    case 'turn/start': {
      const turn: Turn = {
        id: action.turnId,
        question: action.question,
        context: action.context,
        status: 'running',
        steps: [],
        patchIds: [],
        approvalIds: [],
        startedAt: action.now,
      };
      return updateConversation(state, action.conversationId, (c) => ({
        ...c,
        title: c.turns.length === 0 ? titleOf(action.question) : c.title,
        turns: [...c.turns, turn],
      }));
    }
    case 'event':
      return applyEvent(state, action.event);
    case 'turn/result': {
      const { result } = action;
      let approvals = state.approvals;
      const next = updateConversation(state, action.conversationId, (c) =>
        updateTurn(c, action.turnId, (t) => {
          approvals = finishApprovals(state, t);
          const turn: Turn = {
            ...t,
            status: result.status,
            answer: result.answer || t.answer,
            usage: result.usage,
            stepCount: result.steps,
            traceId: result.traceId,
            endedAt: action.now,
            progress: undefined,
          };
          if (result.status === 'failed' && !turn.failure && result.error) {
            turn.failure = { message: result.error };
          }
          return turn;
        }),
      );
      return approvals === state.approvals ? next : { ...next, approvals };
    }
    case 'turn/failed': {
      let approvals = state.approvals;
      const next = updateConversation(state, action.conversationId, (c) =>
        updateTurn(c, action.turnId, (t) => {
          approvals = finishApprovals(state, t);
          if (t.status !== 'running') {
            return t;
          }
          return action.cancelled
            ? { ...t, status: 'cancelled', answer: t.answer ?? 'Cancelled.', endedAt: action.now }
            : { ...t, status: 'failed', failure: t.failure ?? { message: action.message }, endedAt: action.now };
        }),
      );
      return approvals === state.approvals ? next : { ...next, approvals };
    }
    case 'patches/replace': {
      const patches: Record<string, Patch> = {};
      for (const [id, patch] of Object.entries(state.patches)) {
        if (patch.status !== 'pending') {
          patches[id] = patch; // keep resolved ones the daemon no longer lists: turns show them
        }
      }
      for (const patch of action.patches) {
        patches[patch.id] = patch;
      }
      return { ...state, patches };
    }
    case 'patch/update':
      return { ...state, patches: upsertPatch(state.patches, action.patch) };
    case 'approval/ask': {
      const approval = action.approval;
      const next = { ...state, approvals: { ...state.approvals, [approval.id]: approval } };
      const conversationId = approval.conversationId;
      if (!conversationId) {
        return next;
      }
      const turn = runningTurn(next.conversations.find((c) => c.id === conversationId));
      if (!turn) {
        return next;
      }
      return updateConversation(next, conversationId, (c) =>
        updateTurn(c, turn.id, (t) => ({ ...t, approvalIds: [...t.approvalIds, approval.id] })),
      );
    }
    case 'approval/answer': {
      const approval = state.approvals[action.id];
      if (!approval || approval.status !== 'pending') {
        return state;
      }
      const answered: Approval =
        action.answer === null
          ? { ...approval, status: 'expired', answeredIn: action.via }
          : { ...approval, status: 'answered', answer: action.answer, answeredIn: action.via };
      return { ...state, approvals: { ...state.approvals, [action.id]: answered } };
    }
    case 'daemon':
      return { ...state, daemon: action.status };
    case 'config':
      return state.traceUrlTemplate === action.traceUrlTemplate ? state : { ...state, traceUrlTemplate: action.traceUrlTemplate };
    case 'draft':
      return { ...state, draft: { text: action.text, nonce: action.nonce } };
    default:
      return state;
  }
}
