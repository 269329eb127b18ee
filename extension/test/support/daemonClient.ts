/**
 * A plain-Node LSP client for the real daemon, over stdio with vscode-jsonrpc (the library
 * under vscode-languageclient), speaking the protocol types of extension/src/protocol.ts.
 * It answers the daemon's requests the way VS Code does, with hooks a test can change.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  CancellationTokenSource,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { applyHunks } from '../../src/edits/hunks';
import { APPROVAL, CHAT, EVENT, PATCHES, type ApprovalAnswer, type ChatParams, type ChatResult, type CommandApproval, type Patch, type SmolEvent } from '../../src/protocol';
import { initializationOptions } from '../../src/settings';
import { PYTHON } from './env';

interface TextEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

interface ApplyEditParams {
  label?: string;
  edit: { documentChanges?: Array<{ textDocument?: { uri: string }; edits?: TextEdit[]; kind?: string; uri?: string }>; changes?: Record<string, TextEdit[]> };
}

/** What VS Code 1.99 tells a server it can do (the parts the daemon looks at). */
export const VSCODE_CAPABILITIES = {
  workspace: {
    applyEdit: true,
    workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'], changeAnnotationSupport: { groupsOnLabel: true } },
    didChangeConfiguration: { dynamicRegistration: true },
    executeCommand: { dynamicRegistration: true },
    workspaceFolders: true,
    configuration: true,
  },
  textDocument: {
    synchronization: { dynamicRegistration: true, didSave: true },
    codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'refactor.rewrite', 'source'] } }, isPreferredSupport: true },
    publishDiagnostics: { relatedInformation: true },
  },
  window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } }, showDocument: { support: true } },
};

export class DaemonClient {
  readonly events: SmolEvent[] = [];
  readonly messages: Array<{ type: number; message: string }> = [];
  readonly logs: string[] = [];
  readonly approvalRequests: CommandApproval[] = [];
  readonly applyEdits: ApplyEditParams[] = [];
  readonly diagnostics = new Map<string, unknown[]>();
  /** How the approval prompt is answered (null: dismissed). */
  approvalAnswer: string | null = 'Run';
  stderr = '';

  private constructor(
    readonly process: ChildProcess,
    readonly connection: MessageConnection,
  ) {}

  static start(root: string, env: Record<string, string> = {}): DaemonClient {
    const child = spawn(PYTHON, ['-m', 'smol_instruments', 'serve'], { cwd: root, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const client = new DaemonClient(child, connection);
    child.stderr?.on('data', (chunk: Buffer) => {
      client.stderr += chunk.toString();
    });
    connection.onNotification(EVENT, (event: SmolEvent) => client.events.push(event));
    connection.onNotification('window/showMessage', (params: { type: number; message: string }) => client.messages.push(params));
    connection.onNotification('window/logMessage', (params: { message: string }) => client.logs.push(params.message));
    connection.onNotification('textDocument/publishDiagnostics', (params: { uri: string; diagnostics: unknown[] }) => client.diagnostics.set(params.uri, params.diagnostics));
    connection.onNotification('$/progress', () => undefined);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('client/registerCapability', () => null);
    connection.onRequest('workspace/configuration', (params: { items: unknown[] }) => params.items.map(() => null));
    connection.onRequest(APPROVAL, (params: CommandApproval): ApprovalAnswer | null => {
      client.approvalRequests.push(params);
      return client.approvalAnswer === null ? null : { title: client.approvalAnswer };
    });
    connection.onRequest('workspace/applyEdit', (params: ApplyEditParams) => {
      client.applyEdits.push(params);
      applyLikeAnEditor(params);
      return { applied: true };
    });
    connection.listen();
    return client;
  }

  /** Initialize as the extension does: its settings, trust, and structured approvals. */
  async initialize(root: string, settings: Record<string, unknown>, trusted = true): Promise<{ capabilities: Record<string, unknown> }> {
    const rootUri = new URL(`file://${root}`).href;
    const result = await this.connection.sendRequest<{ capabilities: Record<string, unknown> }>('initialize', {
      processId: process.pid,
      clientInfo: { name: 'smol-instruments protocol test' },
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'project' }],
      capabilities: VSCODE_CAPABILITIES,
      initializationOptions: initializationOptions(settings, trusted),
    });
    await this.connection.sendNotification('initialized', {});
    return result;
  }

  chat(params: ChatParams, token = new CancellationTokenSource().token): Promise<ChatResult> {
    return this.connection.sendRequest<ChatResult>(CHAT, params, token);
  }

  async patches(): Promise<Patch[]> {
    return (await this.connection.sendRequest<{ patches: Patch[] }>(PATCHES, {})).patches;
  }

  executeCommand(command: string, args: unknown[]): Promise<unknown> {
    return this.connection.sendRequest('workspace/executeCommand', { command, arguments: args });
  }

  kinds(sessionId: string): string[] {
    return this.events.filter((e) => e.sessionId === sessionId).map((e) => e.kind);
  }

  /** shutdown + exit, then the process must end on its own. */
  async stop(timeoutMs = 10_000): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => {
      if (this.process.exitCode !== null) {
        resolve(this.process.exitCode);
      } else {
        this.process.once('exit', (code) => resolve(code));
      }
    });
    try {
      await this.connection.sendRequest('shutdown');
      await this.connection.sendNotification('exit');
    } catch {
      // already gone
    }
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs))]);
    this.connection.dispose();
    if (code === 'timeout') {
      this.process.kill('SIGKILL');
      throw new Error('the daemon did not exit after shutdown/exit');
    }
    return code;
  }
}

/** Apply a WorkspaceEdit to the files on disk, as an editor (then saving) would. */
function applyLikeAnEditor(params: ApplyEditParams): void {
  for (const change of params.edit.documentChanges ?? []) {
    if (change.kind === 'create' && change.uri) {
      writeFileSync(fileURLToPath(change.uri), '', { flag: 'a' });
      continue;
    }
    if (!change.textDocument || !change.edits) {
      continue;
    }
    const path = fileURLToPath(change.textDocument.uri);
    writeFileSync(path, applyHunks(readFileSync(path, 'utf8'), change.edits));
  }
  for (const [uri, edits] of Object.entries(params.edit.changes ?? {})) {
    const path = fileURLToPath(uri);
    writeFileSync(path, applyHunks(readFileSync(path, 'utf8'), edits));
  }
}

export async function waitFor(predicate: () => boolean, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
