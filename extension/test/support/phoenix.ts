/**
 * A real Phoenix for the Node tests: `phoenix serve` from its own virtual environment (made by
 * `bash .ci/phoenix.sh`) on free 127.0.0.1 ports, with a scratch working directory; the
 * Node twin of tests/support/phoenix.py.
 *
 *   const phoenix = await Phoenix.start();      // waits for /readyz (10-60 s on a busy CPU)
 *   phoenix.tracesEndpoint                      // OTLP/HTTP, for phoenixEndpoint
 *   await phoenix.waitForSpans('smol-instruments', traceId, (spans) => spans.length > 3)
 *   await phoenix.stop();                       // its process group, by pid
 *
 * Spans come back through Phoenix's REST API, `GET /v1/projects/{project}/spans`.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARTIFACTS, freePort } from './env';

/** SMOL_PHOENIX_PYTHON (exported by `. .ci/phoenix.sh`), else the default environment's Python. */
export const PHOENIX_PYTHON =
  process.env.SMOL_PHOENIX_PYTHON ??
  join(process.env.SMOL_PHOENIX_VENV ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'smol-instruments', 'phoenix-venv'), 'bin', 'python');

export function phoenixMissing(): string | undefined {
  return existsSync(PHOENIX_PYTHON) ? undefined : `no Phoenix at ${PHOENIX_PYTHON} (run bash .ci/phoenix.sh, or set SMOL_PHOENIX_PYTHON)`;
}

/** One span as Phoenix's REST API returns it (the fields the tests read). */
export interface PhoenixSpan {
  name: string;
  context: { trace_id: string; span_id: string };
  parent_id: string | null;
  span_kind: string;
  status_code: string;
  attributes: Record<string, unknown>;
}

export class Phoenix {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly workingDir: string,
    readonly logFile: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get tracesEndpoint(): string {
    return `${this.url}/v1/traces`;
  }

  /**
   * `behindCodeServer`: serve under code-server's proxy path of its port (`/proxy/<port>`,
   * PHOENIX_HOST_ROOT_PATH), as `.ci/up` does when the editor is code-server: its pages then
   * load through `http://<code-server>/proxy/<port>/`, and its REST API still answers directly.
   */
  static async start(timeoutMs = 180_000, options: { behindCodeServer?: boolean } = {}): Promise<Phoenix> {
    const port = await freePort();
    let grpcPort = await freePort();
    while (grpcPort === port) {
      grpcPort = await freePort();
    }
    const workingDir = mkdtempSync(join(tmpdir(), 'smol-phoenix-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    const logFile = join(ARTIFACTS, 'phoenix.log');
    const log = createWriteStream(logFile);
    // The developer's own PHOENIX_* / OTEL_* settings (a Postgres URL...) must not leak in.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PHOENIX_') && !k.startsWith('OTEL_')));
    const child = spawn(PHOENIX_PYTHON, ['-m', 'phoenix.server.main', 'serve'], {
      cwd: workingDir,
      env: {
        ...env,
        PHOENIX_TELEMETRY_ENABLED: 'false',
        PHOENIX_ALLOW_EXTERNAL_RESOURCES: 'false',
        PHOENIX_HOST: '127.0.0.1',
        PHOENIX_PORT: String(port),
        PHOENIX_GRPC_PORT: String(grpcPort),
        PHOENIX_WORKING_DIR: workingDir,
        ...(options.behindCodeServer ? { PHOENIX_HOST_ROOT_PATH: `/proxy/${port}` } : {}),
      },
      detached: true, // its own process group, stopped as one
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const phoenix = new Phoenix(child, port, workingDir, logFile);
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null) {
        await phoenix.stop();
        throw new Error(`phoenix serve exited (${child.exitCode}):\n${phoenix.logTail()}`);
      }
      try {
        if ((await fetch(`${phoenix.url}/readyz`)).ok) {
          console.log(`Phoenix ready on ${phoenix.url} in ${Date.now() - started} ms`);
          return phoenix;
        }
      } catch {
        // not up yet
      }
      if (Date.now() - started > timeoutMs) {
        await phoenix.stop();
        throw new Error(`phoenix serve not ready in ${timeoutMs / 1000} s:\n${phoenix.logTail()}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The spans of `project`, of one trace if given (an empty list until the project has a span). */
  async spans(project: string, traceId?: string): Promise<PhoenixSpan[]> {
    const spans: PhoenixSpan[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ limit: '1000' });
      if (traceId) {
        query.set('trace_id', traceId);
      }
      if (cursor) {
        query.set('cursor', cursor);
      }
      const response = await fetch(`${this.url}/v1/projects/${encodeURIComponent(project)}/spans?${query}`, { headers: { accept: 'application/json' } });
      if (response.status === 404) {
        return []; // the project appears with its first span
      }
      if (!response.ok) {
        throw new Error(`Phoenix answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
      }
      const page = (await response.json()) as { data: PhoenixSpan[]; next_cursor?: string | null };
      spans.push(...page.data);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    // Filtered here too, in case a Phoenix version ignores the trace_id parameter.
    return traceId ? spans.filter((s) => s.context.trace_id === traceId) : spans;
  }

  /** Poll until `done(spans)` holds (the exporter and Phoenix both insert in batches). */
  async waitForSpans(project: string, traceId: string | undefined, done: (spans: PhoenixSpan[]) => boolean, timeoutMs = 60_000): Promise<PhoenixSpan[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const spans = await this.spans(project, traceId);
      if (done(spans) || Date.now() > deadline) {
        return spans;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  logTail(lines = 40): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Stop the process group this started (SIGTERM, then SIGKILL) and remove its data. */
  async stop(): Promise<void> {
    const pid = this.child.pid;
    if (pid !== undefined && this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      try {
        process.kill(-pid, 'SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(this.workingDir, { recursive: true, force: true });
  }
}
