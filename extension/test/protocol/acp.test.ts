/**
 * The official ACP client (`@agentclientprotocol/sdk`, the TypeScript SDK editors build on)
 * drives the REAL `smol-instruments acp` subprocess over stdio, with the scripted model for the
 * precise cases and the real small model (the embedded Qwen2.5-Coder-0.5B) for one question.
 * Everything is checked by effect: the bytes of the file on disk, what the client received,
 * what the model was sent.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AcpAgent, exists, type PermissionRequest } from '../support/acpClient';
import { waitFor } from '../support/daemonClient';
import { daemonMissing, modelMissing, sampleProject, ScriptedModel, scriptedModelMissing, skipReason } from '../support/env';

const missing = skipReason(daemonMissing(), scriptedModelMissing());
const REAL_MODEL = 'qwen2.5-coder-0.5b';

const block = (code: string, before = '') => `${before}${before ? '\n' : ''}\`\`\`python\n${code}\n\`\`\``;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) {
    rmSync(dir, { recursive: true, force: true });
  }
});

function project(): string {
  const dir = sampleProject('smol-acp-');
  dirs.push(dir);
  return dir;
}

/** A state directory of its own (saved conversations), and quiet logs. */
function quiet(dir: string): Record<string, string> {
  const state = mkdtempSync(join(tmpdir(), 'smol-acp-state-'));
  dirs.push(state);
  return { LOG_FILE: join(dir, '.agent.log'), XDG_STATE_HOME: state, PHOENIX_ENABLED: 'false', SANDBOX_BACKEND: 'none', LITELLM_LOCAL_MODEL_COST_MAP: 'True' };
}

// Each case starts the agent (about 5 s idle, far more on a loaded machine) and runs the model.
describe.skipIf(missing)('smol-instruments acp, driven by the official ACP client', { timeout: 300_000 }, () => {
  let model: ScriptedModel;
  let agent: AcpAgent | undefined;

  beforeEach(async () => {
    model = await ScriptedModel.start(); // one per case: a case's leftovers never reach the next
  });

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    const failures = await model.failures();
    await model.stop();
    expect(failures).toEqual([]);
  });

  const scripted = (dir: string, extra: Record<string, string> = {}) => ({
    ...quiet(dir),
    MODEL_BACKEND: 'server',
    MODEL_ID: 'openai/scripted',
    MODEL_API_BASE: model.baseUrl,
    MODEL_API_KEY: 'scripted',
    ...extra,
  });

  async function started(dir: string, env = scripted(dir)): Promise<{ acpAgent: AcpAgent; sessionId: string }> {
    agent = AcpAgent.start(dir, env);
    await agent.initialize();
    return { acpAgent: agent, sessionId: await agent.newSession(dir) };
  }

  it('initializes with its capabilities and who it is', async () => {
    const dir = project();
    agent = AcpAgent.start(dir, scripted(dir));
    const init = await agent.initialize();
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(init.agentCapabilities?.promptCapabilities?.embeddedContext).toBe(true);
    expect(init.agentInfo?.name).toBe('smol-instruments');
  });

  it('streams the answer to a question', async () => {
    const dir = project();
    const { acpAgent, sessionId } = await started(dir);
    await model.addTurns([{ reply: block('final_answer("add() returns a - b: it subtracts instead of adding.")', 'Reading add.'), chunk_chars: 6 }]);
    const response = await acpAgent.prompt(sessionId, 'What does add in calc.py return?');
    expect(response.stopReason).toBe('end_turn');
    expect(acpAgent.of(sessionId, 'agent_thought_chunk').length).toBeGreaterThan(3); // streamed, not one block
    expect(acpAgent.text(sessionId, 'agent_thought_chunk')).toContain('Reading add.');
    expect(acpAgent.text(sessionId, 'agent_message_chunk')).toContain('it subtracts instead of adding');
    // the code the question names was read first, shown as a finished read
    const reads = acpAgent.of(sessionId, 'tool_call').filter((t) => t.kind === 'read');
    expect(reads.map((t) => t.status)).toContain('completed');
    const last = (await model.requests()).at(-1)!;
    expect(ScriptedModel.promptText(last)).toContain('What does add in calc.py return?');
  });

  it('writes a granted patch through the editor, on top of its unsaved buffer', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const { acpAgent, sessionId } = await started(dir);
    const unsaved = readFileSync(calc, 'utf8') + '\n# an unsaved line in the editor\n';
    acpAgent.buffers.set(calc, unsaved);
    acpAgent.answer = () => 'accept';
    await model.addTurns([
      block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="add() must add"))', 'It subtracts.'),
      block('final_answer("add() now adds.")'),
    ]);
    const response = await acpAgent.prompt(sessionId, 'Fix add in calc.py');
    expect(response.stopReason).toBe('end_turn');
    // asked once, with the diff of the file as the editor has it
    expect(acpAgent.permissions).toHaveLength(1);
    const asked = acpAgent.permissions[0];
    expect(asked.toolCall.kind).toBe('edit');
    const diff = asked.toolCall.content?.find((c) => c.type === 'diff');
    expect(diff).toMatchObject({ type: 'diff', path: calc });
    expect(diff && 'newText' in diff ? diff.newText : '').toContain('return a + b');
    expect(asked.options.map((o) => o.kind)).toEqual(['allow_once', 'reject_once']);
    // read from the buffer, written through fs/write_text_file: the fix and the unsaved line
    expect(acpAgent.reads).toContain(calc);
    expect(acpAgent.writes.map((w) => w.path)).toEqual([calc]);
    expect(readFileSync(calc, 'utf8')).toBe(unsaved.replace('    return a - b', '    return a + b'));
    const outcome = acpAgent.of(sessionId, 'tool_call_update').filter((u) => u.toolCallId === asked.toolCall.toolCallId).at(-1);
    expect(outcome?.status).toBe('completed');
  });

  it('reads what the editor shows: the answer and the patch follow the unsaved buffer; the jail still refuses', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const secret = join(mkdtempSync(join(tmpdir(), 'smol-acp-outside-')), 'secret.txt');
    dirs.push(dirname(secret));
    writeFileSync(secret, 'OUTSIDE-SECRET-7731\n');
    const disk = readFileSync(calc, 'utf8');
    const unsaved = disk.replace('    return a - b', '    return a * b  # unsaved edit') + '\n# another unsaved line\n';
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.buffers.set(calc, unsaved);
    acpAgent.buffers.set(secret, 'OUTSIDE-SECRET-7731\n'); // an editor that would hand it out
    acpAgent.answer = () => 'accept';
    await model.addTurns([
      block(`print(read_file(path="calc.py"))\nprint(read_file(path="${secret}"))\nprint(read_file(path="../${basename(dirname(secret))}/secret.txt"))`),
      block('print(propose_patch(path="calc.py", old_text="    return a * b  # unsaved edit", new_text="    return a + b", description="add() must add"))'),
      block('final_answer("In your editor add() multiplied; now it adds.")'),
    ]);
    const response = await acpAgent.prompt(sessionId, 'Fix add in calc.py');
    expect(response.stopReason).toBe('end_turn');
    const sent = (await model.requests()).map((r) => ScriptedModel.promptText(r));
    // the context given with the task, and read_file's observation, are the buffer's text
    expect(sent[0]).toContain('return a * b  # unsaved edit');
    expect(sent[1]).toContain('return a * b  # unsaved edit');
    expect(sent[1]).not.toContain('return a - b');
    // the paths outside were refused by the jail: the editor was never asked, nothing leaked
    expect(sent[1]).toContain('outside the repository');
    expect(acpAgent.reads).not.toContain(secret);
    expect(sent.join('\n')).not.toContain('OUTSIDE-SECRET-7731');
    // the proposal's diff is against the buffer, and accepting writes the buffer plus the fix
    const diff = acpAgent.permissions[0].toolCall.content?.find((c) => c.type === 'diff');
    expect(diff && 'oldText' in diff ? diff.oldText : '').toContain('# unsaved edit');
    expect(acpAgent.writes.map((w) => w.path)).toEqual([calc]);
    expect(readFileSync(calc, 'utf8')).toBe(unsaved.replace('    return a * b  # unsaved edit', '    return a + b'));
  });

  it('refuses a patch whose lines changed in the buffer since: stale, nothing written', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc, 'utf8');
    const { acpAgent, sessionId } = await started(dir);
    const typed = before.replace('    return a - b', '    return b - a  # typed meanwhile');
    acpAgent.answer = () => {
      acpAgent.buffers.set(calc, typed); // the user kept typing before choosing Accept
      return 'accept';
    };
    await model.addTurns([
      block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="add() must add"))'),
      block('final_answer("add() now adds.")'),
    ]);
    await acpAgent.prompt(sessionId, 'Fix add in calc.py');
    expect(acpAgent.permissions).toHaveLength(1);
    expect(acpAgent.writes).toEqual([]);
    expect(readFileSync(calc, 'utf8')).toBe(before);
    expect(acpAgent.buffers.get(calc)).toBe(typed);
    const outcome = acpAgent.of(sessionId, 'tool_call_update').filter((u) => u.toolCallId === acpAgent.permissions[0].toolCall.toolCallId).at(-1);
    expect(outcome?.status).toBe('failed');
    expect(JSON.stringify(outcome?.content)).toMatch(/stale.*nothing was written/);
  });

  /** A patch of two hunks of calc.py: add() adds, and mean()'s error says more. */
  const twoHunks = () => {
    const oldText = '    return a - b\n\n\ndef mean(values):\n    """Return the arithmetic mean of a non-empty list of numbers."""\n    if not values:\n        raise ValueError("mean() of an empty list")';
    const newText = oldText.replace('return a - b', 'return a + b').replace('mean() of an empty list', 'mean() needs at least one value');
    return block(`print(propose_patch(path="calc.py", old_text=${JSON.stringify(oldText)}, new_text=${JSON.stringify(newText)}, description="add adds; mean says why"))`);
  };

  it('decides a patch hunk by hunk: the first accepted, the second rejected', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc, 'utf8');
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.answer = () => (acpAgent.permissions.length === 1 ? 'accept' : 'reject');
    await model.addTurns([twoHunks(), block('final_answer("Both fixed.")')]);
    await acpAgent.prompt(sessionId, 'Fix add in calc.py and make the error of mean clearer');
    expect(acpAgent.permissions).toHaveLength(2);
    const [first, second] = acpAgent.permissions;
    expect(first.toolCall.toolCallId).toBe(second.toolCall.toolCallId); // one patch, one tool call
    expect(first.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    expect(first.toolCall.title).toContain('change 1 of 2');
    expect(second.toolCall._meta).toMatchObject({ smolInstruments: { index: 2, count: 2 } });
    // each question shows its own hunk alone
    const newText = (r: PermissionRequest) => {
      const diff = r.toolCall.content?.find((c) => c.type === 'diff');
      return diff && 'newText' in diff ? diff.newText : '';
    };
    expect(newText(first)).toContain('return a + b');
    expect(newText(first)).toContain('mean() of an empty list');
    expect(newText(second)).toContain('return a - b');
    expect(newText(second)).toContain('mean() needs at least one value');
    // the bytes on disk: the first hunk written, the second not
    expect(readFileSync(calc, 'utf8')).toBe(before.replace('    return a - b', '    return a + b'));
    const outcome = acpAgent.of(sessionId, 'tool_call_update').filter((u) => u.toolCallId === first.toolCall.toolCallId).at(-1);
    expect(outcome?.status).toBe('completed');
    expect(JSON.stringify(outcome?.content)).toContain('partial');
  });

  it('decides nothing when a hunk question is cancelled, not even the hunks answered before it', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc);
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.answer = () => (acpAgent.permissions.length === 1 ? 'accept' : null);
    await model.addTurns([twoHunks(), block('final_answer("Both fixed.")')]);
    await acpAgent.prompt(sessionId, 'Fix add in calc.py and make the error of mean clearer');
    expect(acpAgent.permissions).toHaveLength(2);
    expect(readFileSync(calc).equals(before)).toBe(true);
    expect(acpAgent.writes).toEqual([]);
    expect(acpAgent.text(sessionId, 'agent_message_chunk')).toContain('is still pending: nothing was written');
  });

  it('accepts this hunk and the rest with one answer', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc, 'utf8');
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.answer = (request) => request.options.find((o) => o.kind === 'allow_always')!.optionId;
    await model.addTurns([twoHunks(), block('final_answer("Both fixed.")')]);
    await acpAgent.prompt(sessionId, 'Fix add in calc.py and make the error of mean clearer');
    expect(acpAgent.permissions).toHaveLength(1);
    expect(readFileSync(calc, 'utf8')).toBe(before.replace('    return a - b', '    return a + b').replace('mean() of an empty list', 'mean() needs at least one value'));
  });

  it('writes a granted patch to disk itself for a client without fs/*', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc, 'utf8');
    agent = AcpAgent.start(dir, scripted(dir));
    await agent.initialize(false);
    const sessionId = await agent.newSession(dir);
    agent.answer = () => 'accept';
    await model.addTurns([
      block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="add() must add"))'),
      block('final_answer("add() now adds.")'),
    ]);
    await agent.prompt(sessionId, 'Fix add in calc.py');
    expect(agent.permissions).toHaveLength(1);
    expect(agent.reads).toEqual([]);
    expect(agent.writes).toEqual([]);
    expect(readFileSync(calc, 'utf8')).toBe(before.replace('    return a - b', '    return a + b'));
  });

  it('leaves the file as it was when the patch is rejected, and says so', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc);
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.answer = () => 'reject';
    await model.addTurns([
      block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="add() must add"))'),
      block('final_answer("I changed the add function.")'),
    ]);
    await acpAgent.prompt(sessionId, 'Fix add in calc.py');
    expect(acpAgent.permissions).toHaveLength(1);
    expect(readFileSync(calc).equals(before)).toBe(true);
    expect(acpAgent.writes).toEqual([]);
    const updates = acpAgent.of(sessionId, 'tool_call_update').filter((u) => u.toolCallId === acpAgent.permissions[0].toolCall.toolCallId);
    expect(updates.at(-1)?.status).toBe('failed');
    const said = JSON.stringify(updates.at(-1)?.content);
    expect(said).toContain('nothing was written');
  });

  it('asks before a risky command, and a denial keeps it from running', async () => {
    const dir = project();
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.answer = (request) => request.options.find((o) => o.kind === 'reject_once')!.optionId;
    await model.addTurns([
      block('print(run_cmd(command="rm test_calc.py"))'),
      block('final_answer("not removed")'),
      'The command was denied, so test_calc.py was not removed.', // asked again to say why
    ]);
    await acpAgent.prompt(sessionId, 'remove test_calc.py with rm');
    expect(acpAgent.permissions).toHaveLength(1);
    const asked = acpAgent.permissions[0];
    expect(asked.toolCall.title).toContain('rm test_calc.py');
    expect(asked.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    expect(exists(join(dir, 'test_calc.py'))).toBe(true);
    const call = acpAgent.of(sessionId, 'tool_call').find((t) => t.toolCallId === asked.toolCall.toolCallId);
    expect(call).toMatchObject({ kind: 'execute', status: 'pending' });
    const updates = acpAgent.of(sessionId, 'tool_call_update').filter((u) => u.toolCallId === asked.toolCall.toolCallId);
    expect(updates.at(-1)?.status).toBe('failed');
    // the model was told it was refused
    expect(ScriptedModel.promptText((await model.requests()).at(-1)!)).toContain('denied in the editor');
  });

  it('runs an approved command and shows it as the same tool call; what it changed comes back as a patch', async () => {
    const dir = project();
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.answer = (request) => (request.toolCall.kind === 'edit' ? 'accept' : 'run');
    await model.addTurns([block('print(run_cmd(command="rm test_calc.py"))'), block('final_answer("removed")')]);
    await acpAgent.prompt(sessionId, 'remove test_calc.py with rm');
    // the command ran on a copy-on-write view: the deletion is a patch, asked in turn
    expect(acpAgent.permissions.map((p) => p.toolCall.kind)).toEqual(['execute', 'edit']);
    expect(exists(join(dir, 'test_calc.py'))).toBe(false);
    const id = acpAgent.permissions[0].toolCall.toolCallId;
    const statuses = acpAgent.of(sessionId, 'tool_call_update').filter((u) => u.toolCallId === id).map((u) => u.status);
    expect(statuses).toEqual(['in_progress', 'completed']);
  });

  it('stops a run on session/cancel, within the step', async () => {
    const dir = project();
    const { acpAgent, sessionId } = await started(dir);
    // a long reply, every line different (a repeated line would end it early), streamed slowly
    const slow = Array.from({ length: 400 }, (_, i) => `Line ${i} of a long look at calc.py.`).join('\n');
    await model.addTurns([{ reply: slow, chunk_chars: 4, delta_delay_s: 0.2 }]);
    const running = acpAgent.prompt(sessionId, 'explain calc.py in detail');
    await waitFor(() => acpAgent.of(sessionId, 'agent_thought_chunk').length > 0, 60_000, 'the reply to stream');
    await acpAgent.cancel(sessionId);
    const response = await running;
    expect(response.stopReason).toBe('cancelled');
    expect(acpAgent.text(sessionId, 'agent_message_chunk')).not.toContain('Line 399');
  });

  it('withdraws an unanswered patch question on session/cancel: nothing is written', async () => {
    const dir = project();
    const calc = join(dir, 'calc.py');
    const before = readFileSync(calc);
    const { acpAgent, sessionId } = await started(dir);
    let decide = () => undefined as void;
    acpAgent.undecided = new Promise<void>((resolve) => {
      decide = resolve;
    });
    // the first question is answered Accept, too late; the second (next turn) Reject
    acpAgent.answer = () => (acpAgent.permissions.length === 1 ? 'accept' : 'reject');
    await model.addTurns([
      block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b", description="add() must add"))'),
      block('final_answer("I changed the add function.")'),
    ]);
    const running = acpAgent.prompt(sessionId, 'Fix add in calc.py');
    await waitFor(() => acpAgent.permissions.length === 1, 120_000, 'the patch question');
    await acpAgent.cancel(sessionId);
    const response = await running;
    expect(response.stopReason).toBe('cancelled');
    expect(readFileSync(calc).equals(before)).toBe(true);
    expect(acpAgent.text(sessionId, 'agent_message_chunk')).toContain('is still pending: nothing was written');
    decide(); // the late Accept reaches a withdrawn question: nothing happens
    // the patch is still pending, so the next turn asks again; this time it is rejected
    await model.addTurns([block('final_answer("still here")')]);
    await acpAgent.prompt(sessionId, 'are you there?');
    expect(acpAgent.permissions).toHaveLength(2);
    expect(acpAgent.permissions[1].toolCall.toolCallId).toBe(acpAgent.permissions[0].toolCall.toolCallId);
    expect(acpAgent.writes).toEqual([]);
    expect(readFileSync(calc).equals(before)).toBe(true);
  });

  it('answers malformed messages with errors and keeps serving', async () => {
    const dir = project();
    const { acpAgent, sessionId } = await started(dir);
    acpAgent.writeRaw('{"jsonrpc": "2.0", "id": 41, "method": "session/prompt", "params": {\n');
    acpAgent.writeRaw('[1, 2, 3]\n');
    await waitFor(() => acpAgent.wire.filter((m) => m.id === null && m.error).length >= 2, 30_000, 'two error responses');
    const errors = acpAgent.wire.filter((m) => m.id === null).map((m) => (m.error as { code: number }).code);
    expect(errors).toEqual([-32700, -32600]);
    // a prompt for a session that does not exist, and one without its required fields
    await expect(acpAgent.prompt('no-such-session', 'hello')).rejects.toMatchObject({ code: -32602 });
    await expect(acpAgent.agent.request('session/prompt', { prompt: 'not a list' })).rejects.toMatchObject({ code: -32602 });
    await expect(acpAgent.agent.request('session/new', { cwd: 'relative/path', mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(acpAgent.agent.request('no/such/method', {})).rejects.toMatchObject({ code: -32601 });
    // and the agent still serves the session it had
    await model.addTurns([block('final_answer("still here")')]);
    const response = await acpAgent.prompt(sessionId, 'are you there?');
    expect(response.stopReason).toBe('end_turn');
    expect(acpAgent.text(sessionId, 'agent_message_chunk')).toContain('still here');
  });

  it('loads an earlier conversation in a new process: replayed, and the agent hears of it', async () => {
    const dir = project();
    const env = scripted(dir);
    const first = await started(dir, env);
    await model.addTurns([block('final_answer("calc.py has add and mean.")')]);
    await first.acpAgent.prompt(first.sessionId, 'What is in calc.py?');
    await first.acpAgent.stop();
    agent = AcpAgent.start(dir, env);
    await agent.initialize();
    await agent.agent.request('session/load', { sessionId: first.sessionId, cwd: dir, mcpServers: [] });
    expect(agent.text(first.sessionId, 'user_message_chunk')).toContain('What is in calc.py?');
    expect(agent.text(first.sessionId, 'agent_message_chunk')).toContain('calc.py has add and mean.');
    await model.addTurns([block('final_answer("mean uses add.")')]);
    await agent.prompt(first.sessionId, 'and how are they related?');
    const sent = ScriptedModel.promptText((await model.requests()).at(-1)!);
    expect(sent).toContain('Earlier in this conversation');
    expect(sent).toContain('calc.py has add and mean.');
    await expect(agent.agent.request('session/load', { sessionId: '../../etc/passwd', cwd: dir, mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
  });
});

const missingRealModel = missing ?? skipReason(modelMissing(REAL_MODEL));

describe.skipIf(missingRealModel)('smol-instruments acp with the real small model', () => {
  let agent: AcpAgent | undefined;

  afterAll(async () => {
    await agent?.stop();
  });

  it('streams an answer from the embedded model', { timeout: 600_000 }, async () => {
    const dir = project();
    agent = AcpAgent.start(dir, { ...quiet(dir), MODEL_BACKEND: 'embedded', MODEL_FILE: REAL_MODEL, MODEL_THREADS: '1', AGENT_MAX_STEPS: '3' });
    await agent.initialize();
    const sessionId = await agent.newSession(dir);
    const response = await agent.prompt(sessionId, 'What does the function add in calc.py do? Answer in one sentence.');
    expect(['end_turn', 'max_turn_requests']).toContain(response.stopReason);
    // the reply streamed as thoughts (line by line) before the answer came
    const kinds = agent.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update.sessionUpdate);
    expect(kinds).toContain('agent_thought_chunk');
    expect(kinds.indexOf('agent_thought_chunk')).toBeLessThan(kinds.lastIndexOf('agent_message_chunk'));
    expect(agent.text(sessionId, 'agent_message_chunk').trim().length).toBeGreaterThan(0);
  });
});
