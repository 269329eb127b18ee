/**
 * The chat panel page: receives the state (a snapshot, then actions run through the same
 * reducer as the host), renders it once per animation frame, and sends the user's clicks and
 * messages back. Keyboard: Enter sends, Shift+Enter adds a line, Escape stops a run.
 */

import './style.css';
import type { FromWebview, ToWebview } from '../src/chat/messages';
import { isRunning, reduce, type ChatState } from '../src/chat/state';
import { h, PanelRenderer } from './render';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

const vscode = acquireVsCodeApi();
const post = (message: FromWebview) => vscode.postMessage(message);

const history = h('select', { id: 'history', 'aria-label': 'Conversations in this window', title: 'Conversations in this window' }) as HTMLSelectElement;
const newButton = h('button', { type: 'button', class: 'btn', id: 'new', title: 'New conversation', 'data-action': 'newConversation' }, '+ New');
const banner = h('div', { class: 'banner', hidden: true, role: 'status' });
const pending = h('section', { class: 'pending', hidden: true, 'aria-label': 'Pending patches and approvals' });
const log = h('main', { id: 'log', role: 'log', 'aria-label': 'Conversation' });
const input = h('textarea', { id: 'input', rows: '3', 'aria-label': 'Message to the agent' }) as HTMLTextAreaElement;
const send = h('button', { type: 'button', class: 'btn primary', id: 'send', 'data-action': 'send', title: 'Send (Enter)' }, 'Send') as HTMLButtonElement;
const stop = h('button', { type: 'button', class: 'btn danger', id: 'stop', 'data-action': 'stop', title: 'Stop the agent (Escape)', hidden: true }, '■ Stop') as HTMLButtonElement;
const status = h('span', { class: 'sr-only', 'aria-live': 'polite', id: 'status' });

document.getElementById('app')?.append(
  h('header', { class: 'bar' }, history, newButton),
  banner,
  pending,
  log,
  h('footer', { class: 'composer' }, input, h('div', { class: 'composer-row' }, status, h('span', { class: 'hint muted' }, 'Enter to send · Shift+Enter new line'), stop, send)),
);

const renderer = new PanelRenderer({ history, banner, pending, log, send, stop, input, status });
let state: ChatState | undefined;
let frame: number | undefined;
let draftNonce = -1;

function schedule(): void {
  if (frame !== undefined) {
    return;
  }
  frame = requestAnimationFrame(() => {
    frame = undefined;
    if (!state) {
      return;
    }
    renderer.render(state);
    if (state.draft && state.draft.nonce !== draftNonce) {
      draftNonce = state.draft.nonce;
      input.value = state.draft.text;
      input.focus();
    }
  });
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'snapshot':
      state = message.state;
      draftNonce = state.draft?.nonce ?? -1;
      schedule();
      break;
    case 'action':
      if (state) {
        state = reduce(state, message.action);
        schedule();
      }
      break;
    case 'focusInput':
      input.focus();
      break;
  }
});

function submit(): void {
  const text = input.value.trim();
  if (!text || (state && isRunning(state))) {
    return;
  }
  post({ type: 'send', text });
  input.value = '';
}

input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  } else if (event.key === 'Escape' && state && isRunning(state)) {
    event.preventDefault();
    post({ type: 'stop' });
  }
});

history.addEventListener('change', () => post({ type: 'selectConversation', id: history.value }));

// Remember which steps the user opened or closed (a click or Enter/Space on the summary), so
// streaming re-renders keep them so; steps the user never touched follow the run.
log.addEventListener('click', (event) => {
  const summary = (event.target as HTMLElement).closest('summary');
  const details = summary?.parentElement as HTMLDetailsElement | null;
  const key = details?.dataset?.openKey;
  if (details && key) {
    renderer.open.set(key, !details.open);
  }
});

document.addEventListener('click', (event) => {
  const target = (event.target as HTMLElement).closest<HTMLElement>('[data-action]');
  if (!target || (target as HTMLButtonElement).disabled) {
    return;
  }
  const d = target.dataset;
  switch (d.action) {
    case 'send':
      submit();
      return;
    case 'stop':
      post({ type: 'stop' });
      return;
    case 'newConversation':
      post({ type: 'newConversation' });
      input.focus();
      return;
    case 'acceptPatch':
    case 'rejectPatch':
    case 'showDiff':
    case 'askAgain':
      if (d.patch) {
        post({ type: d.action, patchId: d.patch });
      }
      return;
    case 'answerApproval':
      if (d.approval && d.answer) {
        post({ type: 'answerApproval', approvalId: d.approval, answer: d.answer });
      }
      return;
    case 'openTrace':
      event.preventDefault();
      if (d.trace) {
        post({ type: 'openTrace', traceId: d.trace });
      }
      return;
    case 'openContext':
      if (d.uri) {
        post({ type: 'openContext', uri: d.uri, line: Number(d.line ?? '1') });
      }
      return;
    case 'restartDaemon':
      post({ type: 'restartDaemon' });
      return;
    case 'showLog':
      post({ type: 'showLog' });
      return;
    case 'manageTrust':
      post({ type: 'manageTrust' });
      return;
  }
});

post({ type: 'ready' });
