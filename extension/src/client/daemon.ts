/**
 * The daemon: `python -m smol_instruments serve` over stdio, through vscode-languageclient.
 *
 * Finds Python (client/python.ts), starts the language client, restarts it after a crash with
 * backoff, and logs to its own output channel (never revealed by itself). Two hooks reach the
 * rest of the extension: the daemon's `smol.askAboutSelection` command is intercepted (the
 * extension asks for the question and routes it to the chat panel), and
 * `smol/approval` (command approvals, as fields) is answered by the chat controller, which
 * shows it both as a notification and in the panel.
 *
 * In a folder the user does not trust (Workspace Trust), the daemon starts restricted
 * (`initializationOptions.trusted: false`): the agent reads and answers, runs no command and
 * validates nothing by running it. The Python extension's interpreter (often the repository's
 * own virtual environment) is not asked, and a pythonPath inside the folder is not started.
 * Trust granted later restarts the daemon trusted.
 */

import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import type { DaemonStatus } from '../chat/state';
import {
  APPROVAL,
  CHAT,
  DAEMON_ASK_ABOUT_SELECTION,
  EVENT,
  PATCHES,
  type ApprovalAnswer,
  type AskAboutSelectionArgs,
  type ChatParams,
  type ChatResult,
  type CommandApproval,
  type Patch,
  type PatchesResult,
  type SmolEvent,
} from '../protocol';
import { daemonSettings, didChangeConfigurationParams, initializationOptions, startupEnvironment } from '../settings';
import * as api from '../vscodeapi';
import { RestartBackoff } from './backoff';
import { candidates, discoverPython, expandPath, insideFolder, parseProbeOutput, probeArgs, type ProbeResult } from './python';

export interface DaemonHooks {
  askAboutSelection(args: AskAboutSelectionArgs | undefined): Promise<unknown>;
  approve(params: CommandApproval, token: vscode.CancellationToken): Promise<ApprovalAnswer | null>;
}

const PROBE_TIMEOUT_MS = 20_000;
const LATE_SETTING_MS = 120_000;
/** The notification waits this long: a late setting usually shows up within it. */
const NOTIFY_DELAY_MS = 6000;

export function probePython(python: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(python, probeArgs(), { timeout: PROBE_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
      if (error && !stdout) {
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'not found' : code === 'EACCES' ? 'not executable' : (stderr || error.message).trim().split('\n').pop();
        resolve({ spawnError: why ?? 'failed to start' });
        return;
      }
      resolve(parseProbeOutput(stdout));
    });
  });
}

export class Daemon implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private client: LanguageClient | undefined;
  private readonly backoff = new RestartBackoff();
  private readonly stateEmitter = new vscode.EventEmitter<DaemonStatus>();
  private readonly eventEmitter = new vscode.EventEmitter<SmolEvent>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private disposed = false;
  private starting: Promise<boolean> | undefined;
  private status: DaemonStatus = { state: 'stopped' };
  python: string | undefined;
  /** Started for an untrusted folder: the daemon runs no command. */
  restricted = false;

  /** Daemon status changes (for the panel and the status of commands). */
  readonly onDidChangeStatus = this.stateEmitter.event;
  /** Every `smol/event`, in order. */
  readonly onEvent = this.eventEmitter.event;
  /** The daemon (re)started and answers requests: time to redraw patches. */
  readonly onReady = this.readyEmitter.event;

  constructor(private readonly hooks: DaemonHooks) {
    this.output = api.createLogOutputChannel('Smol Instruments');
  }

  get current(): DaemonStatus {
    return this.status;
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  private setStatus(status: DaemonStatus): void {
    this.status = status;
    this.stateEmitter.fire(status);
  }

  /** Start the daemon unless it runs; true once it answers. */
  start(): Promise<boolean> {
    if (this.running) {
      return Promise.resolve(true);
    }
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<boolean> {
    this.setStatus({ state: 'starting', message: 'Looking for Python' });
    const folder = api.workspaceFolder();
    const trusted = api.isTrusted();
    const setting = api.setting<string>('pythonPath', '');
    this.output.debug(`smolInstruments.pythonPath: ${JSON.stringify(api.configuration().inspect('pythonPath'))}`);
    const expanded = setting ? expandPath(setting, folder?.uri.fsPath, os.homedir()) : '';
    if (!trusted && insideFolder(expanded, folder?.uri.fsPath)) {
      const message = `smolInstruments.pythonPath (${expanded}) is inside this folder, which you do not trust: it is not started. Trust the folder, or point pythonPath at a Python outside it.`;
      this.output.error(message);
      this.setStatus({ state: 'error', message });
      return false;
    }
    const fromExtension = expanded || !trusted ? undefined : await api.pythonExtensionInterpreter(folder?.uri);
    const defaultPython = process.platform === 'win32' ? 'python' : 'python3';
    const found = await discoverPython(candidates(expanded, fromExtension, defaultPython), probePython);
    if (!found.ok) {
      this.output.error(found.message);
      for (const tried of found.tried) {
        this.output.info(`tried ${tried.python} (${tried.source}): ${tried.problem}`);
      }
      this.setStatus({ state: 'error', message: found.message });
      if (!setting) {
        this.watchForLateSetting();
      }
      this.notifyIfStillBroken(found.message);
      return false;
    }
    this.python = found.python;
    this.output.info(`daemon: ${found.python} (Python ${found.version}, smol-instruments ${found.daemonVersion}, from ${found.source})`);
    this.setStatus({ state: 'starting', message: 'Starting the daemon' });
    const client = this.createClient(found.python, folder, trusted);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      const message = `the daemon did not start: ${error instanceof Error ? error.message : String(error)}`;
      this.output.error(message);
      this.setStatus({ state: 'error', message: `${message}. See the log (Smol Instruments: Show Log).` });
      return false;
    }
    this.backoff.started(Date.now());
    this.restricted = !trusted;
    this.setStatus({ state: 'running', message: `Python ${found.version}`, restricted: this.restricted });
    this.readyEmitter.fire();
    return true;
  }

  /**
   * Right after a window reload, code-server sometimes hands the extension host the user's
   * settings late (seconds, once over a minute), with no change event: look again for a
   * pythonPath for a while, and start with it when it shows up.
   */
  private watchForLateSetting(): void {
    const started = Date.now();
    const timer = setInterval(() => {
      if (this.disposed || this.status.state !== 'error' || Date.now() - started > LATE_SETTING_MS) {
        clearInterval(timer);
        return;
      }
      if (api.setting<string>('pythonPath', '')) {
        clearInterval(timer);
        this.output.info('smolInstruments.pythonPath arrived after start-up; starting with it');
        void this.restart();
      }
    }, 500);
  }

  /**
   * The panel shows the problem at once; the notification waits until a late setting could
   * have fixed it (see watchForLateSetting), so it never reports a problem already gone.
   */
  private notifyIfStillBroken(message: string): void {
    setTimeout(() => {
      if (this.disposed || this.status.state !== 'error' || this.status.message !== message) {
        return;
      }
      void api.showError(`Smol Instruments: ${message}`, 'Open Settings', 'Show Log').then((choice) => {
        if (choice === 'Open Settings') {
          void api.openSettings('smolInstruments.pythonPath');
        } else if (choice === 'Show Log') {
          this.output.show(true);
        }
      });
    }, NOTIFY_DELAY_MS);
  }

  private createClient(python: string, folder: vscode.WorkspaceFolder | undefined, trusted: boolean): LanguageClient {
    const serverOptions: ServerOptions = {
      command: python,
      args: ['-m', 'smol_instruments', 'serve'],
      // No `transport`: with TransportKind.stdio the client would append `--stdio`.
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, ...startupEnvironment(daemonSettings(api.inspectSetting())) } },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file: the agent reads unsaved buffers of any language.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => initializationOptions(daemonSettings(api.inspectSetting()), trusted),
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.onClosed(),
      },
      initializationFailedHandler: (error) => {
        this.output.error(`the daemon failed to initialize: ${String(error)}`);
        return false;
      },
      middleware: {
        executeCommand: async (command, args, next) => {
          if (command === DAEMON_ASK_ABOUT_SELECTION) {
            return this.hooks.askAboutSelection(args[0] as AskAboutSelectionArgs | undefined);
          }
          return next(command, args);
        },
      },
    };
    const client = new LanguageClient('smolInstruments', 'Smol Instruments', serverOptions, clientOptions);
    client.onNotification(EVENT, (event: SmolEvent) => this.eventEmitter.fire(event));
    client.onRequest(APPROVAL, (params: CommandApproval, token) => this.hooks.approve(params, token));
    return client;
  }

  private async onClosed(): Promise<CloseHandlerResult> {
    if (this.disposed) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const delay = this.backoff.crashed(Date.now());
    if (delay === undefined) {
      const message = `The daemon stopped ${this.backoff.crashesInARow} times in a row; it is not restarted again. See the log, then run "Smol Instruments: Restart the Daemon".`;
      this.output.error(message);
      this.setStatus({ state: 'error', message });
      void api.showError(`Smol Instruments: ${message}`, 'Show Log', 'Restart').then((choice) => {
        if (choice === 'Show Log') {
          this.output.show(true);
        } else if (choice === 'Restart') {
          void this.restart();
        }
      });
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const message = `The daemon stopped; restarting in ${Math.round(delay / 1000)} s`;
    this.output.warn(message);
    this.setStatus({ state: 'restarting', message });
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (this.disposed) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.backoff.started(Date.now());
    // The client restarts itself; tell listeners once it answers again.
    void this.whenRunning().then(() => {
      this.setStatus({ state: 'running', restricted: this.restricted });
      this.readyEmitter.fire();
    });
    return { action: CloseAction.Restart, handled: true, message: 'Restarting the daemon' };
  }

  private whenRunning(): Promise<void> {
    return new Promise((resolve) => {
      const client = this.client;
      if (!client) {
        return;
      }
      const sub = client.onDidChangeState((e) => {
        if (e.newState === State.Running) {
          sub.dispose();
          resolve();
        }
      });
    });
  }

  /** Stop and start again (new Python or settings, or after giving up). */
  async restart(): Promise<boolean> {
    // A start under way used the settings as they were: let it finish, then start afresh.
    await this.starting?.catch(() => false);
    await this.stop();
    this.backoff.reset();
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`stopping the daemon: ${String(error)}`);
      }
      try {
        await client.dispose();
      } catch {
        // already gone
      }
    }
    this.setStatus({ state: 'stopped' });
  }

  private async ready(): Promise<LanguageClient> {
    if (!this.running && !(await this.start())) {
      throw new Error(this.status.message ?? 'the daemon is not running');
    }
    const client = this.client;
    if (!client) {
      throw new Error('the daemon is not running');
    }
    return client;
  }

  async chat(params: ChatParams, token: vscode.CancellationToken): Promise<ChatResult> {
    const client = await this.ready();
    return client.sendRequest<ChatResult>(CHAT, params, token);
  }

  async patches(): Promise<Patch[]> {
    const client = await this.ready();
    const result = await client.sendRequest<PatchesResult>(PATCHES, {});
    return result?.patches ?? [];
  }

  /** `workspace/executeCommand` on the daemon (not through VS Code's command registry). */
  async executeCommand(command: string, args: unknown[]): Promise<unknown> {
    const client = await this.ready();
    return client.sendRequest('workspace/executeCommand', { command, arguments: args });
  }

  /** Send the settings again (workspace/didChangeConfiguration). */
  async sendSettings(): Promise<void> {
    if (!this.running || !this.client) {
      return;
    }
    await this.client.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(daemonSettings(api.inspectSetting())));
  }

  dispose(): void {
    this.disposed = true;
    void this.stop();
    this.stateEmitter.dispose();
    this.eventEmitter.dispose();
    this.readyEmitter.dispose();
    this.output.dispose();
  }
}
