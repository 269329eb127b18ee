/**
 * Node drives the REAL daemon (`python -m smol_instruments serve`) over stdio with
 * vscode-jsonrpc, against the protocol types the extension uses, and the scripted model for
 * the chat. What the extension relies on is checked here without an editor.
 */

import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import { textHash } from '../../src/edits/baseHash';
import { DAEMON_ACCEPT_PATCH, DAEMON_ASK_ABOUT_SELECTION, DAEMON_REJECT_PATCH, PATCH_COMMAND_ERROR, type Patch } from '../../src/protocol';
import { daemonSettings, didChangeConfigurationParams, type InspectedValue } from '../../src/settings';
import { DaemonClient, waitFor } from '../support/daemonClient';
import { daemonMissing, sampleProject, ScriptedModel, scriptedModelMissing, skipReason } from '../support/env';

const missingDaemon = skipReason(daemonMissing());
const missingModel = missingDaemon ?? skipReason(scriptedModelMissing());

/** What the extension sends for these user settings (through its own mapping). */
function settingsAsTheExtensionSends(user: Record<string, unknown>): Record<string, unknown> {
  return daemonSettings((name): InspectedValue | undefined => (name in user ? { globalValue: user[name] } : undefined));
}

const projects: string[] = [];
afterAll(() => {
  for (const dir of projects) {
    rmSync(dir, { recursive: true, force: true });
  }
});

function project(): string {
  const dir = sampleProject();
  projects.push(dir);
  return dir;
}

const quietEnv = (dir: string) => ({ LOG_FILE: join(dir, '.daemon.log'), PHOENIX_ENABLED: 'false', SANDBOX_BACKEND: 'none', LITELLM_LOCAL_MODEL_COST_MAP: 'True' });

const block = (code: string, before = '') => `${before}${before ? '\n' : ''}\`\`\`python\n${code}\n\`\`\``;

describe.skipIf(missingDaemon)('the daemon over stdio', () => {
  let root: string;
  let client: DaemonClient;

  beforeAll(async () => {
    root = project();
    client = DaemonClient.start(root, quietEnv(root));
  });

  afterAll(async () => {
    await client?.stop().catch(() => undefined);
  });

  it('initializes with the capabilities the extension relies on', async () => {
    const settings = settingsAsTheExtensionSends({ modelId: 'openai/scripted', modelApiBase: 'http://127.0.0.1:9/v1', agentMaxSteps: 7, phoenixEnabled: false });
    const { capabilities } = await client.initialize(root, settings);
    const sync = capabilities.textDocumentSync as number | { change?: number };
    expect(typeof sync === 'number' ? sync : sync.change).toBe(2); // incremental
    expect(capabilities.codeActionProvider).toBeTruthy();
    const commands = (capabilities.executeCommandProvider as { commands: string[] }).commands;
    expect(commands).toEqual(expect.arrayContaining([DAEMON_ACCEPT_PATCH, DAEMON_REJECT_PATCH, DAEMON_ASK_ABOUT_SELECTION]));
    // vscode-languageclient registers these as VS Code commands: none may be the extension's.
    expect(commands.filter((c) => c.startsWith('smolInstruments.'))).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(client.messages.filter((m) => m.type === 1)).toEqual([]); // the camelCase settings were accepted
  });

  it('answers smol/patches with an empty list on a fresh project', async () => {
    expect(await client.patches()).toEqual([]);
  });

  it('reports a bad setting from didChangeConfiguration as one error naming it', async () => {
    await client.connection.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(settingsAsTheExtensionSends({ modelTemperature: 7 })));
    await waitFor(() => client.messages.some((m) => m.type === 1), 10_000, 'an error message');
    const error = client.messages.find((m) => m.type === 1)!;
    expect(error.message).toContain('modelTemperature');
  });

  it('offers "Ask agent about selection" as a code action on a selection', async () => {
    const uri = new URL(`file://${join(root, 'calc.py')}`).href;
    const text = readFileSync(join(root, 'calc.py'), 'utf8');
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
    const actions = await client.connection.sendRequest<Array<{ title: string; command?: { command: string; arguments: unknown[] } }>>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } },
      context: { diagnostics: [] },
    });
    const ask = actions.find((a) => a.title === 'Ask agent about selection');
    expect(ask?.command?.command).toBe(DAEMON_ASK_ABOUT_SELECTION);
    expect(ask?.command?.arguments[0]).toMatchObject({ uri, range: { start: { line: 3 }, end: { line: 6 } } });
  });

  it('exits promptly on shutdown and exit', async () => {
    const code = await client.stop();
    expect(code).toBe(0);
  });
});

describe.skipIf(missingModel)('smol/chat against the scripted model', () => {
  let model: ScriptedModel;
  let root: string;
  let client: DaemonClient;

  beforeAll(async () => {
    model = await ScriptedModel.start();
  });

  afterAll(async () => {
    await model?.stop();
  });

  async function startDaemon(extra: Record<string, unknown> = {}): Promise<void> {
    root = project();
    client = DaemonClient.start(root, quietEnv(root));
    await client.initialize(
      root,
      settingsAsTheExtensionSends({ modelId: 'openai/scripted', modelApiBase: model.baseUrl, modelApiKey: 'scripted', phoenixEnabled: false, sandboxBackend: 'none', approvalTimeoutS: 20, ...extra }),
    );
  }

  afterEach(async () => {
    await client?.stop().catch(() => undefined);
    expect(await model.failures()).toEqual([]);
  });

  it('streams ordered events, returns the result, and lists the proposed patch', async () => {
    await model.addTurns([
      block('print(read_file(path="calc.py"))', 'Thought: I will read calc.py.'),
      { reply: block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="add() must add"))', 'It subtracts.'), expect_user_contains: 'return a - b' },
      block('final_answer("add() subtracted; patch proposed.")'),
    ]);
    await startDaemon();
    const selection = { uri: new URL(`file://${join(root, 'calc.py')}`).href, range: { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } }, text: 'def add(a, b):\n' };
    const result = await client.chat({ sessionId: 'proto-1', message: 'Why does test_add fail?', selections: [selection] });
    expect(result).toMatchObject({ sessionId: 'proto-1', status: 'completed', answer: 'add() subtracted; patch proposed.', steps: 3 });
    expect(result.usage.promptTokens).toBeGreaterThan(0);
    await waitFor(() => client.kinds('proto-1').includes('final'), 10_000, 'the final event');
    const events = client.events.filter((e) => e.sessionId === 'proto-1');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['approval', 'step', 'text', 'code', 'tool', 'observation', 'patch', 'final']));
    // A question about a failing test runs the tests first, contained and unasked, and says so.
    expect(events[0]).toMatchObject({ kind: 'approval', command: 'python -m pytest -q', decision: 'auto', contained: true });
    const [patch] = await client.patches();
    expect(patch).toMatchObject({ sessionId: 'proto-1', status: 'pending', summary: 'add() must add' });
    expect(patch.files[0].uri).toBe(selection.uri);
    expect(patch.files[0].hunks).toEqual([{ id: 0, status: 'pending', range: { start: { line: 5, character: 0 }, end: { line: 6, character: 0 } }, newText: '    return a + b\n', added: 1, removed: 1 }]);
    expect(patch.files[0].baseHash).toBe(textHash(readFileSync(join(root, 'calc.py'), 'utf8'))); // the editor draws on this text only
    // The selection reached the model with the question.
    const [first] = await model.requests();
    expect(ScriptedModel.promptText(first)).toContain('Why does test_add fail?');
  });

  async function proposeFix(sessionId: string): Promise<Patch> {
    await model.addTurns([
      block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="fix add"))'),
      block('final_answer("proposed")'),
    ]);
    await client.chat({ sessionId, message: 'fix add' });
    const [patch] = await client.patches();
    return patch;
  }

  it('accepts a patch through workspace/applyEdit, so the editor applies it', async () => {
    await startDaemon();
    const patch = await proposeFix('proto-accept');
    expect(await client.executeCommand(DAEMON_ACCEPT_PATCH, [patch.id])).toEqual({ patchId: patch.id, status: 'accepted', accepted: [0], files: ['calc.py'] });
    expect(client.applyEdits).toHaveLength(1);
    expect(client.applyEdits[0].label).toBe('Agent patch: fix add');
    expect(readFileSync(join(root, 'calc.py'), 'utf8')).toContain('return a + b');
    expect((await client.patches())[0].status).toBe('accepted');
    await waitFor(() => client.events.some((e) => e.kind === 'patch' && e.patch.status === 'accepted'), 5000, 'the accepted patch event');
  });

  it('rejects a patch without touching the file', async () => {
    await startDaemon();
    const before = readFileSync(join(root, 'calc.py'), 'utf8');
    const patch = await proposeFix('proto-reject');
    expect(await client.executeCommand(DAEMON_REJECT_PATCH, [patch.id])).toEqual({ patchId: patch.id, status: 'rejected', rejected: [0] });
    expect(readFileSync(join(root, 'calc.py'), 'utf8')).toBe(before);
    expect(client.applyEdits).toEqual([]);
  });

  it('says a patch is stale when its lines changed in the buffer, writes nothing, and keeps the error code', async () => {
    await startDaemon();
    const patch = await proposeFix('proto-stale');
    const uri = patch.files[0].uri;
    const text = readFileSync(join(root, 'calc.py'), 'utf8');
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: text.replace('return a - b', 'return a - b  # edited') } });
    const error = await client.executeCommand(DAEMON_ACCEPT_PATCH, [patch.id]).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );
    expect(error?.code).toBe(PATCH_COMMAND_ERROR);
    expect(error?.message).toMatch(/stale/);
    expect((await client.patches())[0].status).toBe('stale');
    expect(readFileSync(join(root, 'calc.py'), 'utf8')).toBe(text);
  });

  it('asks for approval with smol/approval, as fields (Run / Deny), and honours Deny', async () => {
    await model.addTurns([block('print(run_cmd(command="pip install requests"))'), block('final_answer("not installed")')]);
    await startDaemon();
    client.approvalAnswer = 'Deny';
    const result = await client.chat({ sessionId: 'proto-approval', message: 'install requests' });
    expect(result.status).toBe('completed');
    const [request] = client.approvalRequests;
    expect(request).toMatchObject({ command: 'pip install requests', actions: ['Run', 'Deny'] });
    expect(request.rule).toMatch(/^approval\./);
    expect(request.reason).toBeTruthy();
    expect(Array.isArray(request.widens)).toBe(true);
    const approval = client.events.find((e) => e.kind === 'approval');
    expect(approval).toMatchObject({ command: 'pip install requests', decision: 'denied' });
  });

  it('stops a run when the request is cancelled ($/cancelRequest), and keeps serving', async () => {
    await model.addTurns([{ reply: 'Thinking about it... ', forever: true, delta_delay_s: 0.02 }]);
    await startDaemon();
    const source = new CancellationTokenSource();
    const pending = client.chat({ sessionId: 'proto-cancel', message: 'think forever' }, source.token).then(
      (r) => r,
      (e: { code?: number }) => e,
    );
    await waitFor(() => client.kinds('proto-cancel').includes('text'), 20_000, 'streamed text');
    source.cancel();
    const outcome = await pending;
    // Either answer is in the contract: status "cancelled" or the RequestCancelled error.
    expect('status' in outcome ? outcome.status : outcome.code).toSatisfy((v: unknown) => v === 'cancelled' || v === -32800);
    expect(await client.patches()).toEqual([]);
  });
});
