/**
 * Messages between the extension host and the chat webview. No `vscode` import.
 */

import type { Action, ChatState } from './state';

/** Extension → webview. */
export type ToWebview =
  | { type: 'snapshot'; state: ChatState }
  | { type: 'action'; action: Action }
  | { type: 'focusInput' };

/** Webview → extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'newConversation' }
  | { type: 'selectConversation'; id: string }
  | { type: 'acceptPatch'; patchId: string }
  | { type: 'rejectPatch'; patchId: string }
  | { type: 'showDiff'; patchId: string }
  | { type: 'askAgain'; patchId: string }
  | { type: 'answerApproval'; approvalId: string; answer: string }
  | { type: 'openTrace'; traceId: string }
  | { type: 'openContext'; uri: string; line: number }
  | { type: 'restartDaemon' }
  | { type: 'showLog' }
  | { type: 'manageTrust' };

const FROM_WEBVIEW_TYPES = new Set<FromWebview['type']>([
  'ready',
  'send',
  'stop',
  'newConversation',
  'selectConversation',
  'acceptPatch',
  'rejectPatch',
  'showDiff',
  'askAgain',
  'answerApproval',
  'openTrace',
  'openContext',
  'restartDaemon',
  'showLog',
  'manageTrust',
]);

/** The webview is less trusted than the host: accept only well-formed messages. */
export function parseFromWebview(value: unknown): FromWebview | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const message = value as Record<string, unknown>;
  if (typeof message.type !== 'string' || !FROM_WEBVIEW_TYPES.has(message.type as FromWebview['type'])) {
    return undefined;
  }
  const strings: Record<string, string[]> = {
    send: ['text'],
    selectConversation: ['id'],
    acceptPatch: ['patchId'],
    rejectPatch: ['patchId'],
    showDiff: ['patchId'],
    askAgain: ['patchId'],
    answerApproval: ['approvalId', 'answer'],
    openTrace: ['traceId'],
    openContext: ['uri'],
  };
  for (const key of strings[message.type] ?? []) {
    if (typeof message[key] !== 'string') {
      return undefined;
    }
  }
  if (message.type === 'openContext' && typeof message.line !== 'number') {
    return undefined;
  }
  return message as unknown as FromWebview;
}
