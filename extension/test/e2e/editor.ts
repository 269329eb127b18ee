/**
 * Real VS Code for the end-to-end test: code-server (installed by .ci/code-server.sh) with the
 * packaged .vsix, driven in Debian's Chromium through playwright-core.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, CODE_SERVER, freePort, VSIX } from '../support/env';

/** User settings of a quiet, trusted workbench: no tips, no start page, no minimap. */
export const WORKBENCH_SETTINGS: Record<string, unknown> = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.colorTheme': 'Default Dark Modern',
  'workbench.tips.enabled': false,
  'editor.minimap.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'extensions.ignoreRecommendations': true,
};

export class CodeServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly base: string,
    readonly folder: string,
  ) {}

  get userData(): string {
    return join(this.base, 'user-data');
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(this.folder)}`;
  }

  /** Install the .vsix into a fresh profile, write its settings, start on a free port. */
  static async start(folder: string, settings: Record<string, unknown>): Promise<CodeServer> {
    const base = mkdtempSync(join(tmpdir(), 'smol-code-server-'));
    const userData = join(base, 'user-data');
    const extensions = join(base, 'extensions');
    mkdirSync(join(userData, 'User'), { recursive: true });
    mkdirSync(extensions, { recursive: true });
    writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
    const config = join(base, 'config.yaml');
    writeFileSync(config, 'auth: none\ncert: false\n');
    const common = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];
    const install = spawnSync(CODE_SERVER, [...common, '--install-extension', VSIX], { encoding: 'utf8', timeout: 120_000 });
    if (install.status !== 0 || !/successfully installed/.test(install.stdout)) {
      throw new Error(`installing ${VSIX} failed: ${install.stdout}\n${install.stderr}`);
    }
    const port = await freePort();
    mkdirSync(ARTIFACTS, { recursive: true });
    const log = createWriteStream(join(ARTIFACTS, 'code-server.log'));
    // Its own process group, so stopping it stops the extension host and the daemon it started.
    const child = spawn(
      CODE_SERVER,
      [...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', folder],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const server = new CodeServer(child, port, base, folder);
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (response.ok) {
          break;
        }
      } catch {
        // not up yet
      }
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`code-server did not start (see ${join(ARTIFACTS, 'code-server.log')})`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return server;
  }

  /**
   * Write the user settings again (with one harmless change). After a window reload,
   * code-server now and then gives the extension host no user settings at all until the file
   * changes; a rewrite makes it read them again.
   */
  rewriteSettings(): void {
    const file = join(this.userData, 'User', 'settings.json');
    const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    settings['workbench.tips.enabled'] = !settings['workbench.tips.enabled'];
    writeFileSync(file, JSON.stringify(settings, null, 2));
  }

  /** The extension's output channel and the daemon's log, as files of this profile. */
  logFiles(): string {
    return join(this.userData, 'logs');
  }

  /** Delete the profile (after stop, once its logs are copied). */
  remove(): void {
    rmSync(this.base, { recursive: true, force: true });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.pid === undefined) {
      return;
    }
    const exited = new Promise((r) => this.child.once('exit', r));
    try {
      process.kill(-this.child.pid, 'SIGTERM');
    } catch {
      return;
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 8000))]);
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/**
 * The end of an editor session, whatever part of it started: a last screenshot (`prefix` +
 * 99-last), the browser closed, code-server stopped, its logs kept in test-artifacts/`logs`, its
 * profile and the project copy deleted.
 */
export async function closeSession(session: { wb?: Workbench; browser?: Browser; editor?: CodeServer; project?: string }, prefix = '', logs = 'vscode-logs'): Promise<void> {
  const { wb, browser, editor, project } = session;
  if (wb) {
    await wb.screenshot(`${prefix}99-last`).catch(() => undefined);
  }
  await browser?.close().catch(() => undefined);
  await editor?.stop();
  if (editor && existsSync(editor.logFiles())) {
    cpSync(editor.logFiles(), join(ARTIFACTS, logs), { recursive: true });
  }
  editor?.remove();
  if (project) {
    rmSync(project, { recursive: true, force: true });
  }
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

const EXTENSION_ID = 'smol-instruments.smol-instruments';

/** The VS Code workbench in a page: the few gestures the test needs, by keyboard first. */
export class Workbench {
  constructor(readonly page: Page) {}

  async open(url: string): Promise<void> {
    await this.page.goto(url);
    await this.ready();
  }

  async ready(): Promise<void> {
    await this.page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    await this.page.locator('.activitybar a[aria-label="Smol Instruments"]').waitFor({ timeout: 60_000 });
  }

  async screenshot(name: string): Promise<string> {
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, `${name}.png`);
    await this.page.screenshot({ path });
    return path;
  }

  /** Run a command from the command palette by its title. */
  async command(title: string): Promise<void> {
    // No Escape first: in the editor it would drop the selection the command is about.
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
    await this.page.keyboard.press('Enter');
  }

  async openFile(name: string): Promise<void> {
    // A file written a moment ago reaches Quick Open's index when the file watcher reports it
    // (seconds on a busy machine): ask again rather than wait on a stale list.
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('Escape');
      await this.page.keyboard.press('Control+P');
      const input = this.page.locator('.quick-input-widget input.input');
      await input.waitFor({ state: 'visible' });
      await input.fill(name);
      try {
        await this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15_000 });
        break;
      } catch (error) {
        if (attempt >= 4) {
          throw error;
        }
      }
    }
    await this.page.keyboard.press('Enter');
    await this.page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
    await this.page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor();
  }

  /** Select whole lines `from`..`to` (1-based) of the active editor. */
  async selectLines(from: number, to: number): Promise<void> {
    await this.page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await this.page.keyboard.press('Control+G');
    await this.page.keyboard.type(String(from));
    await this.page.keyboard.press('Enter');
    await this.page.keyboard.press('Home');
    await this.page.keyboard.press('Home'); // Monaco's Home toggles: this lands on column 1
    for (let line = from; line <= to; line += 1) {
      await this.page.keyboard.press('Shift+ArrowDown');
    }
  }

  /** Type into the open quick input (an input box) and accept. */
  async answerInputBox(text: string, titleContains?: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    if (titleContains) {
      await widget.locator('.quick-input-title', { hasText: titleContains }).waitFor({ timeout: 15_000 });
    }
    const input = widget.locator('input.input');
    await input.waitFor({ state: 'visible' });
    await input.fill(text);
    await this.page.keyboard.press('Enter');
  }

  /** The chat panel's page (a webview: two nested iframes). */
  chat(): FrameLocator {
    return this.page.frameLocator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('#active-frame');
  }

  async showChat(): Promise<FrameLocator> {
    const chat = this.chat();
    if (!(await chat.locator('#input').isVisible().catch(() => false))) {
      await this.page.locator('.activitybar a[aria-label="Smol Instruments"]').click();
    }
    await chat.locator('#input').waitFor({ timeout: 30_000 });
    return chat;
  }

  codeLens(title: string | RegExp): Locator {
    return this.page.locator('.monaco-editor .codelens-decoration a', { hasText: title });
  }

  statusBar(text: string | RegExp): Locator {
    return this.page.locator('.statusbar-item', { hasText: text });
  }

  notification(text: string | RegExp): Locator {
    return this.page.locator('.notification-toast', { hasText: text });
  }
}
