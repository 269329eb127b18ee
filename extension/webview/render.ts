/**
 * The chat panel's DOM, built from the state. Turns are rebuilt only when their part of the
 * state changed (the reducer keeps unchanged objects identical), so streaming stays cheap.
 *
 * Everything the agent, the model or the repository wrote (commands, tool arguments and
 * output, errors, summaries, paths, the model's words) is drawn through `visible`: escape
 * sequences, bidi overrides and invisible characters show as marks, and a command awaiting
 * approval shows every line break and says in words what it hides. The user's own question
 * is shown as typed.
 */

import type { Approval, ChatState, Conversation, Step, ToolCall, Turn } from '../src/chat/state';
import { activeConversation, isRunning, progressText } from '../src/chat/state';
import type { Patch } from '../src/protocol';
import { checkVerdict, filePath, hunkSummary, patchStats, pendingPatches } from '../src/edits/patchState';
import { traceUrl } from '../src/settings';
import { textWarnings, visible } from '../src/visible';
import { renderInlineMarkdown, renderMarkdown } from './markdown';

type Child = Node | string | null | undefined | false;

export function h(tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) {
      continue;
    }
    if (key === 'class') {
      el.className = String(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

function markdown(text: string, cls = 'md'): HTMLElement {
  const el = h('div', { class: cls });
  el.innerHTML = renderMarkdown(visible(text)); // markdown-it with html: false escapes any markup
  return el;
}

function inlineMarkdown(text: string, cls: string): HTMLElement {
  const el = h('div', { class: cls });
  el.innerHTML = renderInlineMarkdown(visible(text)); // html: false, as for the rest
  return el;
}

/** Untrusted text for a DOM text node: nothing in it invisible. */
function shown(text: string, breaks = false): string {
  return visible(text, { breaks });
}

function button(label: string, action: string, data: Record<string, string> = {}, opts: { primary?: boolean; title?: string; disabled?: boolean } = {}): HTMLElement {
  const attrs: Record<string, string | boolean | undefined> = {
    type: 'button',
    class: opts.primary ? 'btn primary' : 'btn',
    'data-action': action,
    'data-key': `${action}:${Object.values(data).join(':')}`,
    title: opts.title,
    disabled: opts.disabled,
  };
  for (const [k, v] of Object.entries(data)) {
    attrs[`data-${k}`] = v;
  }
  return h('button', attrs, label);
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function formatArgs(args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([k, v]) => {
    const value = typeof v === 'string' ? JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v) : JSON.stringify(v);
    return `${k}=${value}`;
  });
  return visible(parts.join(', '));
}

// --- pieces -------------------------------------------------------------------------------

function toolLine(tool: ToolCall): HTMLElement {
  const el = h(
    'li',
    { class: tool.error ? 'tool failed' : 'tool' },
    h('code', {}, `${tool.name}(${formatArgs(tool.args)})`),
    h('span', { class: 'muted' }, ` ${seconds(tool.durationMs)}`),
  );
  if (tool.error) {
    el.append(
      h(
        'div',
        { class: 'error-box' },
        h('strong', {}, shown(tool.error.error)),
        ` ${shown(tool.error.message)}`,
        tool.error.recovery_suggestion ? h('div', { class: 'suggestion' }, `Suggestion: ${shown(tool.error.recovery_suggestion)}`) : null,
      ),
    );
  }
  return el;
}

export interface RenderContext {
  open: Map<string, boolean>;
  state: ChatState;
}

function stepView(turn: Turn, step: Step, isLast: boolean, ctx: RenderContext): HTMLElement {
  const key = `${turn.id}:${step.number}`;
  const live = turn.status === 'running' && isLast;
  const open = ctx.open.get(key) ?? live;
  const tools = step.tools.map((t) => t.name);
  const errors = step.errors.length + step.tools.filter((t) => t.error).length;
  const summary = h(
    'summary',
    {},
    h('span', { class: 'step-title' }, `Step ${step.number}`),
    tools.length ? h('span', { class: 'muted' }, ` · ${[...new Set(tools)].join(', ')}`) : null,
    errors ? h('span', { class: 'badge warn' }, `${errors} error${errors === 1 ? '' : 's'}`) : null,
    live ? h('span', { class: 'spinner', 'aria-label': 'running' }) : null,
  );
  const body = h('div', { class: 'step-body' });
  if (step.text.trim()) {
    body.append(markdown(step.text, 'md stream'));
  } else if (step.code) {
    body.append(markdown(`\`\`\`python\n${step.code}\n\`\`\``));
  }
  if (step.tools.length) {
    body.append(h('ul', { class: 'tools' }, ...step.tools.map(toolLine)));
  }
  for (const note of step.approvals) {
    body.append(
      h('div', { class: `approval-note ${note.decision}` }, `${note.decision === 'approved' ? 'Approved' : 'Denied'}: `, h('code', {}, shown(note.command, true)), note.rule ? h('span', { class: 'muted' }, ` (${shown(note.rule)})`) : null),
    );
  }
  if (step.observation) {
    body.append(
      h('div', { class: 'label' }, step.observation.truncated ? 'Observation (truncated)' : 'Observation'),
      h('pre', { class: 'observation' }, shown(step.observation.text)),
    );
  }
  for (const error of step.errors) {
    body.append(errorView(error.message, error.recoverySuggestion));
  }
  return h('details', { class: 'step', 'data-open-key': key, open }, summary, body);
}

function errorView(message: string, suggestion?: string, cls = 'error-box'): HTMLElement {
  return h('div', { class: cls, role: 'alert' }, h('div', {}, shown(message)), suggestion ? h('div', { class: 'suggestion' }, `Suggestion: ${shown(suggestion)}`) : null);
}

export function patchCard(patch: Patch): HTMLElement {
  const { added, removed } = patchStats(patch);
  const files = shown(patch.files.map((f) => filePath(f)).join(', '), true);
  const card = h(
    'div',
    { class: `patch-card ${patch.status}`, 'data-patch-id': patch.id },
    h('div', { class: 'patch-head' }, h('span', { class: 'patch-title' }, shown(patch.summary, true) || 'Agent patch'), h('span', { class: `badge ${patch.status}` }, patch.status)),
    h('div', { class: 'muted' }, `${files} `, h('span', { class: 'added' }, `+${added}`), ' ', h('span', { class: 'removed' }, `−${removed}`)),
  );
  const hunks = hunkSummary(patch);
  if (hunks) {
    card.append(h('div', { class: 'hunks muted' }, hunks));
  }
  const validation = patch.validation;
  if (validation && validation.backend) {
    const checks = validation.checks ?? [];
    card.append(
      h(
        'div',
        { class: 'validation muted' },
        `validated (${validation.backend}): ${validation.applies ? 'applies' : 'does not apply'}`,
        ...checks.map((c) => {
          const verdict = checkVerdict(c);
          return h('span', { class: `check ${verdict.kind}`, title: shown(c.output.slice(0, 2000)) }, ` · ${shown(c.command, true)} ${verdict.mark}`);
        }),
      ),
    );
  }
  const actions = h('div', { class: 'actions' });
  if (patch.status === 'pending') {
    actions.append(
      button('Accept', 'acceptPatch', { patch: patch.id }, { primary: true, title: 'Apply every pending hunk (lands in the undo history)' }),
      button('Reject', 'rejectPatch', { patch: patch.id }, { title: 'Reject every pending hunk: nothing changes' }),
      button('Diff', 'showDiff', { patch: patch.id }, { title: 'Open the proposed change side by side' }),
    );
  } else if (patch.status === 'stale') {
    card.append(h('div', { class: 'warn-box' }, `Stale: the file changed since it was proposed${patch.statusReason ? ` (${shown(patch.statusReason)})` : ''}. Nothing was written.`));
    actions.append(button('Ask the agent again', 'askAgain', { patch: patch.id }, { primary: true }));
  } else if (patch.statusReason) {
    card.append(h('div', { class: 'muted' }, shown(patch.statusReason)));
  }
  if (actions.childElementCount) {
    card.append(actions);
  }
  return card;
}

function approvalView(approval: Approval): HTMLElement {
  if (approval.status !== 'pending') {
    const verb = approval.status === 'expired' ? 'No answer' : approval.answer === 'Run' ? 'Allowed' : approval.answer === 'Deny' ? 'Denied' : (approval.answer ?? 'Answered');
    const where = approval.answeredIn && approval.answeredIn !== 'daemon' ? ` (in the ${approval.answeredIn})` : '';
    return h('div', { class: `approval done ${approval.answer === 'Run' ? 'approved' : 'denied'}` }, `${verb}: `, h('code', {}, shown(approval.command ?? approval.message, true)), where);
  }
  const warnings = approval.command !== undefined ? textWarnings(approval.command, 'command') : [];
  return h(
    'div',
    { class: 'approval pending', role: 'alertdialog', 'aria-label': 'The agent asks for approval', 'data-approval-id': approval.id },
    h('div', { class: 'approval-title' }, '⚠ The agent wants to run'),
    approval.command !== undefined ? h('pre', { class: 'command' }, shown(approval.command, true)) : h('div', { class: 'message' }, shown(approval.message)),
    ...warnings.map((warning) => h('div', { class: 'warn-box hidden-text' }, warning)),
    approval.rule ? inlineMarkdown(`Policy ${approval.rule}${approval.reason ? `: ${approval.reason}` : ''}`, 'muted policy') : null,
    approval.widens?.length ? h('div', { class: 'widens' }, `Approving also allows: ${shown(approval.widens.join(', '))}`) : null,
    h(
      'div',
      { class: 'actions' },
      ...approval.actions.map((title, i) => button(title, 'answerApproval', { approval: approval.id, answer: title }, { primary: i === 0 })),
    ),
  );
}

function turnFooter(turn: Turn, ctx: RenderContext): HTMLElement | null {
  if (turn.status === 'running') {
    const step = turn.steps[turn.steps.length - 1];
    const where = step ? `Working · step ${step.number}${step.maxSteps ? `/${step.maxSteps}` : ''}` : 'Starting…';
    const progress = progressText(turn);
    const percent = turn.progress?.percent;
    return h(
      'div',
      { class: 'turn-footer muted', 'aria-live': 'polite' },
      h('span', { class: 'spinner' }),
      ` ${where}`,
      progress ? h('span', { class: 'progress-text' }, ` · ${progress}`) : null,
      percent !== undefined ? h('progress', { class: 'progress-bar', max: '100', value: String(percent), 'aria-label': progress ?? '' }) : null,
    );
  }
  const parts: Child[] = [];
  const status = turn.status === 'completed' ? '' : turn.status === 'max_steps' ? 'stopped at the step limit · ' : `${turn.status} · `;
  parts.push(status);
  if (turn.usage) {
    parts.push(`${turn.usage.promptTokens.toLocaleString()} prompt + ${turn.usage.completionTokens.toLocaleString()} completion tokens`);
  }
  if (turn.stepCount !== undefined) {
    parts.push(` · ${turn.stepCount} step${turn.stepCount === 1 ? '' : 's'}`);
  }
  if (turn.endedAt) {
    parts.push(` · ${seconds(turn.endedAt - turn.startedAt)}`);
  }
  const footer = h('div', { class: 'turn-footer muted' }, ...parts);
  if (turn.traceId && ctx.state.traceUrlTemplate) {
    // The real address, so hovering shows it and "Copy Link" works; a click goes through the
    // extension (openExternal) all the same.
    footer.append(' · ', h('a', { href: traceUrl(ctx.state.traceUrlTemplate, turn.traceId), class: 'trace-link', 'data-action': 'openTrace', 'data-trace': turn.traceId, 'data-key': `trace:${turn.id}`, title: 'Open the trace of this run' }, 'trace'));
  }
  return footer;
}

export function turnView(turn: Turn, ctx: RenderContext): HTMLElement {
  const question = h(
    'div',
    { class: 'question' },
    h('div', { class: 'who' }, 'You'),
    h('div', { class: 'question-text' }, turn.question),
    turn.context.length
      ? h(
          'div',
          { class: 'context' },
          ...turn.context.map((c) =>
            h('button', { type: 'button', class: 'chip', 'data-action': 'openContext', 'data-uri': c.uri, 'data-line': String(c.startLine), 'data-key': `ctx:${turn.id}:${c.uri}:${c.startLine}`, title: 'Open the selection' }, c.startLine === c.endLine ? `${c.path}:${c.startLine}` : `${c.path}:${c.startLine}-${c.endLine}`),
          ),
        )
      : null,
  );
  const answer = h('div', { class: 'answer' }, h('div', { class: 'who' }, 'Agent'));
  if (turn.steps.length) {
    answer.append(h('div', { class: 'steps' }, ...turn.steps.map((s, i) => stepView(turn, s, i === turn.steps.length - 1, ctx))));
  }
  for (const id of turn.approvalIds) {
    const approval = ctx.state.approvals[id];
    if (approval) {
      answer.append(approvalView(approval));
    }
  }
  for (const id of turn.patchIds) {
    const patch = ctx.state.patches[id];
    if (patch) {
      answer.append(patchCard(patch));
    }
  }
  if (turn.failure) {
    answer.append(errorView(turn.failure.message, turn.failure.recoverySuggestion, 'error-box run-failure'));
  }
  if (turn.answer && turn.status !== 'running') {
    answer.append(markdown(turn.answer, 'md final-answer'));
  }
  const footer = turnFooter(turn, ctx);
  if (footer) {
    answer.append(footer);
  }
  return h('article', { class: `turn ${turn.status}`, 'data-turn-id': turn.id }, question, answer);
}

function emptyView(): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('h2', {}, 'Smol Instruments'),
    h('p', {}, 'Ask the local agent about your code. It reads, searches, runs tests, and proposes patches you accept or reject in the editor.'),
    h(
      'ul',
      {},
      h('li', {}, 'Select code, then ', h('kbd', {}, 'Ctrl+Alt+A'), ' (', h('kbd', {}, '⌘⌥A'), ') to ask about it.'),
      h('li', {}, 'Proposed changes appear inline with Accept | Reject | Diff.'),
      h('li', {}, 'Risky commands wait for your approval.'),
    ),
  );
}

// --- the whole panel ----------------------------------------------------------------------

interface TurnCache {
  turn: Turn;
  deps: unknown[];
  el: HTMLElement;
}

export class PanelRenderer {
  private readonly turnCache = new Map<string, TurnCache>();
  readonly open = new Map<string, boolean>();
  private lastConversation: string | undefined;

  constructor(
    private readonly root: {
      history: HTMLSelectElement;
      banner: HTMLElement;
      pending: HTMLElement;
      log: HTMLElement;
      send: HTMLButtonElement;
      stop: HTMLButtonElement;
      input: HTMLTextAreaElement;
      status: HTMLElement;
    },
  ) {}

  render(state: ChatState): void {
    const conversation = activeConversation(state);
    this.renderHistory(state, conversation);
    this.renderBanner(state);
    this.renderPending(state, conversation);
    this.renderLog(state, conversation);
    const running = isRunning(state, conversation.id);
    this.root.send.hidden = running;
    this.root.stop.hidden = !running;
    this.root.input.placeholder = running ? 'The agent is working… (Escape stops it)' : 'Ask the agent… (Enter sends, Shift+Enter adds a line)';
  }

  private renderHistory(state: ChatState, active: Conversation): void {
    const select = this.root.history;
    const options = [...state.conversations].reverse().map((c) => {
      const running = isRunning(state, c.id) ? ' (running)' : '';
      return h('option', { value: c.id, selected: c.id === active.id }, `${c.title}${running}`);
    });
    const signature = options.map((o) => `${(o as HTMLOptionElement).value}=${o.textContent}`).join('|') + `#${active.id}`;
    if (select.dataset.signature !== signature) {
      select.replaceChildren(...options);
      select.value = active.id;
      select.dataset.signature = signature;
    }
  }

  private renderBanner(state: ChatState): void {
    const { daemon } = state;
    const banner = this.root.banner;
    if (daemon.state === 'running' && daemon.restricted) {
      banner.hidden = false;
      banner.className = 'banner restricted';
      const text = 'Restricted mode: this folder is not trusted, so the agent runs no command.';
      const detail = 'It still reads, answers and proposes patches; nothing is validated by running it.';
      banner.replaceChildren(h('div', {}, h('strong', {}, text), h('div', { class: 'banner-detail' }, detail)), h('div', { class: 'actions' }, button('Manage Workspace Trust', 'manageTrust')));
      return;
    }
    if (daemon.state === 'running') {
      banner.hidden = true;
      banner.replaceChildren();
      return;
    }
    banner.hidden = false;
    banner.className = `banner ${daemon.state}`;
    const text = {
      starting: 'Starting the agent daemon…',
      restarting: 'The daemon stopped; restarting…',
      stopped: 'The daemon is not running.',
      error: 'The daemon cannot run.',
    }[daemon.state];
    const children: HTMLElement[] = [h('div', {}, h('strong', {}, text), daemon.message ? h('div', { class: 'banner-detail' }, shown(daemon.message)) : null)];
    if (daemon.state === 'error' || daemon.state === 'stopped') {
      children.push(h('div', { class: 'actions' }, button('Restart the daemon', 'restartDaemon', {}, { primary: true }), button('Show log', 'showLog')));
    }
    banner.replaceChildren(...children);
    this.root.status.textContent = text;
  }

  private renderPending(state: ChatState, conversation: Conversation): void {
    const inTurns = new Set(conversation.turns.flatMap((t) => t.patchIds));
    const others = pendingPatches(state.patches).filter((p) => !inTurns.has(p.id));
    const orphanApprovals = Object.values(state.approvals).filter((a) => a.status === 'pending' && !conversation.turns.some((t) => t.approvalIds.includes(a.id)));
    const section = this.root.pending;
    if (others.length === 0 && orphanApprovals.length === 0) {
      section.hidden = true;
      section.replaceChildren();
      return;
    }
    section.hidden = false;
    const children = orphanApprovals.map(approvalView);
    if (others.length) {
      children.push(h('div', { class: 'label' }, `Pending patches (${others.length})`), ...others.map(patchCard));
    }
    section.replaceChildren(...children);
  }

  private renderLog(state: ChatState, conversation: Conversation): void {
    const log = this.root.log;
    const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 60;
    const switched = this.lastConversation !== conversation.id;
    this.lastConversation = conversation.id;
    if (conversation.turns.length === 0) {
      log.replaceChildren(emptyView());
      return;
    }
    const ctx: RenderContext = { open: this.open, state };
    const elements: HTMLElement[] = [];
    const seen = new Set<string>();
    for (const turn of conversation.turns) {
      seen.add(turn.id);
      const deps = [...turn.patchIds.map((id) => state.patches[id]), ...turn.approvalIds.map((id) => state.approvals[id]), state.traceUrlTemplate];
      const cached = this.turnCache.get(turn.id);
      if (cached && cached.turn === turn && sameDeps(cached.deps, deps)) {
        elements.push(cached.el);
        continue;
      }
      const el = turnView(turn, ctx);
      this.turnCache.set(turn.id, { turn, deps, el });
      elements.push(el);
    }
    for (const id of [...this.turnCache.keys()]) {
      if (!seen.has(id) && !state.conversations.some((c) => c.turns.some((t) => t.id === id))) {
        this.turnCache.delete(id);
      }
    }
    const focusKey = (document.activeElement as HTMLElement | null)?.dataset?.key;
    if (log.childElementCount !== elements.length || elements.some((el, i) => log.children[i] !== el)) {
      log.replaceChildren(...elements);
    }
    if (focusKey) {
      const again = log.querySelector<HTMLElement>(`[data-key="${CSS.escape(focusKey)}"]`);
      if (again && document.activeElement !== again) {
        again.focus();
      }
    }
    if (nearBottom || switched) {
      log.scrollTop = log.scrollHeight;
    }
  }
}

function sameDeps(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
