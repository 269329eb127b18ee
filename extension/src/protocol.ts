/**
 * The daemon ⇄ editor contract (docs/protocol.md) as TypeScript types.
 *
 * Checked against the daemon's own types: protocol.schema.json is generated from the Python
 * message classes, and extension/test/unit/protocolSchema.test.ts fails unless every type here
 * is exactly the one generated from it (`npm run schema` regenerates the schema).
 *
 * No `vscode` import here: the webview bundle and the Node protocol test use these too.
 */

export const CHAT = 'smol/chat';
export const EVENT = 'smol/event';
export const PATCHES = 'smol/patches';
/** Server → client request: a command put to the user, as fields (the client opts in). */
export const APPROVAL = 'smol/approval';

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
  /** The selected text; without it the daemon reads the range from the buffer or the file. */
  text?: string;
}

export interface ChatParams {
  sessionId?: string;
  message: string;
  selections?: Selection[];
  workDoneToken?: string | number;
}

export type RunStatus = 'completed' | 'incomplete' | 'cancelled' | 'failed' | 'max_steps';

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

/** The one error schema of tools, events and commands (every key always present). */
export interface ErrorObject {
  error: string;
  message: string;
  tool: string | null;
  context: Record<string, unknown>;
  recovery_suggestion: string | null;
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
  added: number;
  removed: number;
  /** Why it was decided so (e.g. what made it stale). */
  reason?: string;
}

export interface PatchFile {
  uri: string;
  /** Repository-relative path. */
  path: string;
  diff: string;
  /** SHA-256 (hex, of the UTF-8) of the text the hunks' ranges are in; null: a file to create. */
  baseHash: string | null;
  hunks: Hunk[];
}

/** One check run on the patched copy (snake_case keys: the sandbox's own report). */
export interface ValidationCheck {
  command: string;
  passed: boolean;
  output: string;
  exit_code?: number;
  duration_ms?: number;
  timed_out?: boolean;
  /** It fails the same way without the patch (the project's tests already failed). */
  fails_without_patch?: boolean;
  /** What the same command said without the patch (its summary), when a failure was compared. */
  without_patch?: string;
  /** Of the tests that failed without the patch and still fail, those that use a file it changes (pytest ids). */
  related_tests?: string[];
}

export interface Validation {
  /** 'docker', 'local' or 'none'. */
  backend: string;
  applies: boolean;
  checks: ValidationCheck[];
  /** Why it was not validated, or why it does not apply. */
  message?: string;
  duration_ms?: number;
}

export interface Patch {
  id: string;
  sessionId: string | null;
  summary: string;
  status: PatchStatus;
  files: PatchFile[];
  validation: Validation;
  /** Lines added and removed. */
  added: number;
  removed: number;
  /** Why the status changed, e.g. what made a patch stale. */
  statusReason?: string;
  traceId?: string;
}

export interface PatchesResult {
  patches: Patch[];
}

/** What `smol.acceptPatch` / `smol.rejectPatch` answer: the status after, the hunks decided. */
export interface PatchCommandResult {
  patchId: string;
  status: PatchStatus;
  accepted?: number[];
  rejected?: number[];
  stale?: number[];
  failed?: number[];
  files?: string[];
}

/** The options of `smol.acceptPatch [patchId, options]`: hunk ids; all pending when absent. */
export interface AcceptOptions {
  hunks?: number[];
}

/** The options of `smol.rejectPatch [patchId, options]`. */
export interface RejectOptions {
  reason?: string;
  hunks?: number[];
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
  /** null for a tool called outside a step. */
  step: number | null;
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
  rule: string | null;
  reason?: string;
  decision: 'approved' | 'denied' | 'auto';
  /** Whether the command ran (or would have run) inside containment. */
  contained: boolean;
  /** What an approval let it do beyond its containment, e.g. ['network']. */
  widens: string[];
}
/** What the run waits for before the model's next word: the local model getting ready, or the model reading its prompt. */
export interface ProgressEvent extends EventBase {
  kind: 'progress';
  stage: 'model' | 'prompt';
  message: string;
  /** 0-100 when known. */
  percent?: number;
}
export interface ErrorEvent extends EventBase {
  kind: 'error';
  message: string;
  recoverySuggestion?: string;
}
export interface FinalEvent extends EventBase {
  kind: 'final';
  answer: string;
  status: RunStatus;
}

export type SmolEvent =
  | StepEvent
  | TextEvent
  | CodeEvent
  | ToolEvent
  | ObservationEvent
  | PatchEvent
  | ApprovalEvent
  | ProgressEvent
  | ErrorEvent
  | FinalEvent;

/** Arguments of `smol.askAboutSelection`. */
export interface AskAboutSelectionArgs {
  uri: string;
  range: Range;
  question?: string;
}

/** What the client tells the daemon in `initialize` (besides the settings). */
export interface InitializationOptions {
  settings?: Record<string, unknown>;
  /** False in a folder the user does not trust: the agent runs no command. */
  trusted?: boolean;
  /** Ask command approvals with `smol/approval` rather than `window/showMessageRequest`. */
  smolApproval?: boolean;
}

/** `smol/approval` params: the command, the policy's rule and reason, what approving widens. */
export interface CommandApproval {
  command: string;
  rule: string | null;
  reason: string | null;
  /** What approving also lets the command do beyond its containment, e.g. ['network']. */
  widens: string[];
  /** The same question as one text. */
  message: string;
  actions: string[];
}

/** `smol/approval` result (null: dismissed). */
export interface ApprovalAnswer {
  title: string;
}

export const APPROVE = 'Run';
export const DENY = 'Deny';
