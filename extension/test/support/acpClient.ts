/**
 * An ACP client made with the official TypeScript SDK (`@agentclientprotocol/sdk`), driving the
 * REAL `smol-instruments acp` subprocess over stdio. It answers the agent's requests the way an
 * editor does (permissions, fs/read_text_file from its buffers, fs/write_text_file), with hooks
 * a test can change, and records every update and every raw line the agent wrote.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { PYTHON } from './env';

export type PermissionRequest = acp.RequestPermissionRequest;

export class AcpAgent {
  readonly updates: acp.SessionNotification[] = [];
  readonly permissions: PermissionRequest[] = [];
  readonly reads: string[] = [];
  readonly writes: Array<{ path: string; content: string }> = [];
  /** Every line the agent wrote on stdout, parsed (the protocol channel, as sent). */
  readonly wire: Array<Record<string, unknown>> = [];
  /** Unsaved editor buffers by absolute path: fs/read_text_file answers from here first. */
  readonly buffers = new Map<string, string>();
  /** Which option the user picks (by its optionId); null cancels the question. */
  answer: (request: PermissionRequest) => string | null = (request) => request.options[0].optionId;
  /** While set, a permission request waits (a user who has not decided yet). */
  undecided: Promise<void> | undefined;
  stderr = '';
  private readonly connection: acp.ClientConnection;

  private constructor(readonly child: ChildProcess) {
    const app = acp
      .client({ name: 'smol-instruments-acp-test' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        this.permissions.push(params);
        await this.undecided;
        const choice = this.answer(params);
        return { outcome: choice === null ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: choice } };
      })
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        this.reads.push(params.path);
        return { content: this.buffers.get(params.path) ?? readFileSync(params.path, 'utf8') };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.writes.push({ path: params.path, content: params.content });
        writeFileSync(params.path, params.content);
        this.buffers.delete(params.path);
        return {};
      });
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim())) {
        this.wire.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    const stream = acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
    this.connection = app.connect(stream);
  }

  /** `smol-instruments acp` in `cwd` with the environment `env` added. */
  static start(cwd: string, env: Record<string, string>): AcpAgent {
    const child = spawn(PYTHON, ['-m', 'smol_instruments', 'acp'], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    return new AcpAgent(child);
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  /** initialize as an editor that offers fs/* (Zed does). */
  initialize(fs = true): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs }, terminal: false },
      clientInfo: { name: 'smol-instruments-acp-test', version: '0' },
    });
  }

  async newSession(cwd: string): Promise<string> {
    const response = await this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    return response.sessionId;
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  /** Raw bytes on the agent's stdin, past the SDK (a malformed message). */
  writeRaw(text: string): void {
    this.child.stdin!.write(text);
  }

  /** The updates of one kind for a session, in order. */
  of<K extends acp.SessionUpdate['sessionUpdate']>(sessionId: string, kind: K): Array<Extract<acp.SessionUpdate, { sessionUpdate: K }>> {
    return this.updates
      .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
      .map((n) => n.update as Extract<acp.SessionUpdate, { sessionUpdate: K }>);
  }

  /** The text of the chunks of one kind (agent_message_chunk, agent_thought_chunk, ...). */
  text(sessionId: string, kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk'): string {
    return this.of(sessionId, kind)
      .map((u) => (u.content.type === 'text' ? u.content.text : ''))
      .join('');
  }

  async stop(): Promise<void> {
    this.connection.close();
    if (this.child.exitCode !== null) {
      return;
    }
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.child.exitCode === null) {
      this.child.kill('SIGKILL');
    }
  }
}

/** Whether a path exists (for tests that check a file was or was not touched). */
export const exists = existsSync;
