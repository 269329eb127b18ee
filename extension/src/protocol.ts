/**
 * The daemon ⇄ editor contract (docs/protocol.md) as TypeScript types.
 *
 * No `vscode` import here: the webview bundle and the Node protocol test use these too.
 */

export const CHAT = 'smol/chat';
export const EVENT = 'smol/event';
export const PATCHES = 'smol/patches';

/** The daemon's commands (auto-registered in VS Code by vscode-languageclient). */
export const DAEMON_ACCEPT_PATCH = 'smol.acceptPatch';
export const DAEMON_REJECT_PATCH = 'smol.rejectPatch';
export const DAEMON_ASK_ABOUT_SELECTION = 'smol.askAboutSelection';

export const DIAGNOSTIC_SOURCE = 'smol-instruments';
export const DEFAULT_QUESTION = 'Explain this code and point out problems.';

/** The error code of a patch command the daemon could not carry out (stale, not pending...). */
export const PATCH_COMMAND_ERROR = -32001;
/** LSP's RequestCancelled. */
export const REQUEST_CANCELLED = -32800;

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Selection {
  uri: string;
  range: Range;
  text: string;
}

export interface ChatParams {
  sessionId?: string;
  message: string;
  selections?: Selection[];
  workDoneToken?: string | number;
}

export type RunStatus = 'completed' | 'cancelled' | 'failed' | 'max_steps';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatResult {
  sessionId: string;
  status: RunStatus;
  answer: string;
  steps: number;
  usage: Usage;
  traceId?: string;
  error?: string;
}

/** The one error schema of tools, events and commands. */
export interface ErrorObject {
  error: string;
  message: string;
  tool?: string | null;
  context?: unknown;
  recovery_suggestion?: string | null;
}

export type PatchStatus = 'pending' | 'accepted' | 'rejected' | 'stale' | 'failed';

export interface Hunk {
  /** The lines of the file as it was when the patch was made that the hunk replaces. */
  range: Range;
  newText: string;
}

export interface PatchFile {
  uri: string;
  /** Repository-relative path (the daemon adds it; derived from the uri when absent). */
  path?: string;
  diff: string;
  hunks: Hunk[];
}

export interface ValidationCheck {
  command: string;
  passed: boolean;
  output: string;
}

export interface Validation {
  backend: 'docker' | 'local' | 'none' | string;
  applies: boolean;
  checks: ValidationCheck[];
}

export interface Patch {
  id: string;
  sessionId: string | null;
  summary: string;
  status: PatchStatus;
  files: PatchFile[];
  validation?: Validation | null;
  traceId?: string;
  /** Lines added and removed (the daemon adds them). */
  added?: number;
  removed?: number;
  /** Why the status changed, e.g. what made a patch stale. */
  statusReason?: string;
}

export interface PatchesResult {
  patches: Patch[];
}

interface EventBase {
  sessionId: string;
  seq: number;
}

export interface StepEvent extends EventBase {
  kind: 'step';
  step: number;
  maxSteps: number;
}
export interface TextEvent extends EventBase {
  kind: 'text';
  text: string;
}
export interface CodeEvent extends EventBase {
  kind: 'code';
  step: number;
  code: string;
}
export interface ToolEvent extends EventBase {
  kind: 'tool';
  step: number;
  name: string;
  args: Record<string, unknown>;
  durationMs: number;
  error?: ErrorObject;
}
export interface ObservationEvent extends EventBase {
  kind: 'observation';
  step: number;
  text: string;
  truncated: boolean;
}
export interface PatchEvent extends EventBase {
  kind: 'patch';
  patch: Patch;
}
export interface ApprovalEvent extends EventBase {
  kind: 'approval';
  command: string;
  verdict: string;
  rule: string;
  decision: 'approved' | 'denied' | 'auto';
  /** Whether the command ran (or would have run) inside containment. */
  contained?: boolean;
  /** What an approval let it do beyond its containment, e.g. ['network']. */
  widens?: string[];
}
export interface ErrorEvent extends EventBase {
  kind: 'error';
  message: string;
  recoverySuggestion?: string | null;
}
export interface FinalEvent extends EventBase {
  kind: 'final';
  answer: string;
  status?: RunStatus;
}

export type SmolEvent =
  | StepEvent
  | TextEvent
  | CodeEvent
  | ToolEvent
  | ObservationEvent
  | PatchEvent
  | ApprovalEvent
  | ErrorEvent
  | FinalEvent;

/** Arguments of `smol.askAboutSelection`. */
export interface AskAboutSelectionArgs {
  uri: string;
  range: Range;
  question?: string;
}

/** `window/showMessageRequest` as the daemon uses it for approvals. */
export interface MessageActionItem {
  title: string;
}

export interface ShowMessageRequestParams {
  type: number;
  message: string;
  actions?: MessageActionItem[];
}

export const APPROVE = 'Run';
export const DENY = 'Deny';
