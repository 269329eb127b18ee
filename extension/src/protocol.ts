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

/** Pending while any hunk is; then what the hunks' decisions add up to. */
export type PatchStatus = 'pending' | 'accepted' | 'partial' | 'rejected' | 'stale' | 'failed';
export type HunkStatus = 'pending' | 'accepted' | 'rejected' | 'stale' | 'failed';

export interface Hunk {
  /** Stable: numbered across the patch's files at proposal, never renumbered. */
  id: number;
  status: HunkStatus;
  /** The lines it replaces, in the text whose hash is the file's `baseHash`. */
  range: Range;
  newText: string;
  added?: number;
  removed?: number;
  /** Why it was decided so (e.g. what made it stale). */
  reason?: string;
}

export interface PatchFile {
  uri: string;
  /** Repository-relative path (the daemon adds it; derived from the uri when absent). */
  path?: string;
  diff: string;
  /** SHA-256 (hex, of the UTF-8) of the text the hunks' ranges are in; null: a file to create. */
  baseHash?: string | null;
  hunks: Hunk[];
}

/** `smol.acceptPatch` / `smol.rejectPatch` answers. */
export interface PatchDecision {
  patchId: string;
  status: PatchStatus;
  accepted?: number[];
  rejected?: number[];
  stale?: number[];
  failed?: number[];
  files?: string[];
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
