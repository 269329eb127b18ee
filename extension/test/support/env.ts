/**
 * What the protocol and end-to-end tests need from the machine, and the scripted model server
 * (`python -m tests.support.scripted_model`, the project's stand-in for an LLM) as a process.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO_ROOT = resolve(__dirname, '..', '..', '..');
export const SAMPLE_PROJECT = join(REPO_ROOT, 'extension', 'sample-project');
export const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

/** The Python with smol-instruments installed: SMOL_PYTHON, else the checkout's .venv. */
export const PYTHON = process.env.SMOL_PYTHON ?? join(REPO_ROOT, '.venv', 'bin', 'python');

/** When set (CI), a missing prerequisite fails the test instead of skipping it. */
export const REQUIRED = process.env.SMOL_E2E_REQUIRED === '1' || process.env.SMOL_E2E_REQUIRED === 'true';

/** Why the daemon cannot be driven here, or undefined when it can. */
export function daemonMissing(): string | undefined {
  if (!existsSync(PYTHON)) {
    return `no Python at ${PYTHON} (run bash .ci/setup, or set SMOL_PYTHON)`;
  }
  const probe = spawnSync(PYTHON, ['-c', 'import smol_instruments.lsp.server'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.status !== 0) {
    return `the daemon does not import with ${PYTHON}: ${(probe.stderr || '').trim().split('\n').pop()}`;
  }
  return undefined;
}

/** Why the scripted model server is not available, or undefined. */
export function scriptedModelMissing(): string | undefined {
  if (!existsSync(join(REPO_ROOT, 'tests', 'support', 'scripted_model.py'))) {
    return 'tests/support/scripted_model.py is not in this checkout yet';
  }
  return undefined;
}

/**
 * Why the pinned model `name` cannot run here (not cached, or corrupt), or undefined: asked of
 * `smol-instruments model list`, so MODEL_CACHE_DIR and the catalog count as they do for the daemon.
 */
export function modelMissing(name: string): string | undefined {
  const listing = spawnSync(PYTHON, ['-m', 'smol_instruments', 'model', 'list', '--json'], { encoding: 'utf8', timeout: 120_000 });
  if (listing.status !== 0) {
    return `cannot list the local models with ${PYTHON}: ${(listing.stderr || String(listing.error ?? '')).trim().split('\n').pop()}`;
  }
  const rows = JSON.parse(listing.stdout) as Array<{ name: string; state: string; path: string }>;
  const row = rows.find((r) => r.name === name);
  if (!row) {
    return `no model ${name} in the catalog`;
  }
  return row.state === 'cached, verified' ? undefined : `model ${name} is ${row.state} at ${row.path} (run bash .ci/model.sh ${name})`;
}

/** A port free on every interface (so also on 127.0.0.1; Phoenix's gRPC receiver binds them all). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Skip with a reason, or fail in CI (SMOL_E2E_REQUIRED=1). */
export function skipReason(...reasons: Array<string | undefined>): string | undefined {
  const missing = reasons.filter((r): r is string => Boolean(r));
  if (missing.length === 0) {
    return undefined;
  }
  const text = missing.join('; ');
  if (REQUIRED) {
    throw new Error(`required test prerequisites missing: ${text}`);
  }
  console.warn(`[skipped] ${text}`);
  return text;
}

/** A copy of the sample project in a fresh git repository (the daemon's root is its git top level). */
export function sampleProject(prefix = 'smol-sample-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(SAMPLE_PROJECT, dir, { recursive: true });
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=e2e@smol.invalid', '-c', 'user.name=e2e', 'commit', '-qm', 'sample');
  return dir;
}

export type ScriptTurn = string | { reply: string; delay_s?: number; delta_delay_s?: number; chunk_chars?: number; forever?: boolean; expect_user_contains?: string };

export interface RecordedRequest {
  body: { messages?: Array<{ role: string; content: unknown }> } | null;
  turn: number | null;
  status: number;
  reply: string | null;
}

/** The scripted model as a process on 127.0.0.1; turns are appended per scenario. */
export class ScriptedModel {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly baseUrl: string,
  ) {}

  static async start(turns: ScriptTurn[] = []): Promise<ScriptedModel> {
    const child = spawn(PYTHON, ['-m', 'tests.support.scripted_model', '--port', '0'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const line = await new Promise<string>((resolveLine, reject) => {
      const timer = setTimeout(() => reject(new Error(`scripted model did not start: ${stderr}`)), 30_000);
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (text) => {
        clearTimeout(timer);
        resolveLine(text);
      });
      child.once('exit', (code) => reject(new Error(`scripted model exited (${code}): ${stderr}`)));
    });
    const ready = JSON.parse(line) as { url: string; base_url: string };
    const model = new ScriptedModel(child, ready.url, ready.base_url);
    if (turns.length) {
      await model.addTurns(turns);
    }
    return model;
  }

  async addTurns(turns: ScriptTurn[]): Promise<void> {
    const response = await fetch(`${this.url}/_scripted/turns`, { method: 'POST', body: JSON.stringify(turns), headers: { 'content-type': 'application/json' } });
    if (!response.ok) {
      throw new Error(`adding turns: ${response.status} ${await response.text()}`);
    }
  }

  async requests(): Promise<RecordedRequest[]> {
    return (await (await fetch(`${this.url}/_scripted/requests`)).json()) as RecordedRequest[];
  }

  async failures(): Promise<string[]> {
    return (await (await fetch(`${this.url}/_scripted/failures`)).json()) as string[];
  }

  /** Everything the agent sent in one request, as text. */
  static promptText(request: RecordedRequest): string {
    return (request.body?.messages ?? [])
      .map((m) => (typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p: { text?: string }) => p.text ?? '').join('') : ''))
      .join('\n');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) {
      return;
    }
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.child.exitCode === null) {
      this.child.kill('SIGKILL');
    }
  }
}

/** code-server as installed by .ci/code-server.sh (or SMOL_CODE_SERVER). */
export const CODE_SERVER =
  process.env.SMOL_CODE_SERVER ?? join(process.env.SMOL_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'smol-instruments'), 'code-server', 'bin', 'code-server');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const VSIX = process.env.SMOL_VSIX ?? join(REPO_ROOT, 'smol-instruments.vsix');

export function editorMissing(): string | undefined {
  if (!existsSync(CODE_SERVER)) {
    return `no code-server at ${CODE_SERVER} (run bash .ci/code-server.sh)`;
  }
  if (!existsSync(CHROMIUM)) {
    return `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`;
  }
  if (!existsSync(VSIX)) {
    return `no ${VSIX} (run npm run package)`;
  }
  return undefined;
}
