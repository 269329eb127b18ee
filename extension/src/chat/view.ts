/**
 * The chat panel: a webview view in the Smol Instruments activity-bar container.
 *
 * The page (extension/webview/) is local, bundled, and runs under a strict content security
 * policy with a per-load nonce. The host keeps the state; the page gets a snapshot when it
 * loads and every action after that.
 */

import * as vscode from 'vscode';
import { parseFromWebview, type FromWebview, type ToWebview } from './messages';
import type { ChatStore } from './store';

export const CHAT_VIEW_ID = 'smolInstruments.chat';

export type WebviewMessageHandler = (message: FromWebview) => void | Promise<void>;

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly store: ChatStore,
    private readonly onMessage: WebviewMessageHandler,
  ) {
    this.disposables.push(
      store.subscribe((action) => {
        if (this.ready) {
          void this.post({ type: 'action', action });
        }
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const webviewRoot = vscode.Uri.joinPath(this.extensionUri, 'out', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [webviewRoot] };
    view.webview.html = this.html(view.webview, webviewRoot);
    this.disposables.push(
      view.webview.onDidReceiveMessage((raw) => {
        const message = parseFromWebview(raw);
        if (!message) {
          return;
        }
        if (message.type === 'ready') {
          this.ready = true;
          void this.post({ type: 'snapshot', state: this.store.state });
          return;
        }
        void Promise.resolve(this.onMessage(message)).catch((error: unknown) => {
          console.error('smol-instruments: webview message failed', error);
        });
      }),
      view.onDidDispose(() => {
        this.view = undefined;
        this.ready = false;
      }),
    );
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /**
   * Show the panel. With `preserveFocus` the editor keeps the keyboard (the user asked about a
   * selection and may go on typing); the first time the view must be opened, which focuses it,
   * so focus goes back to the editor group afterwards.
   */
  async reveal(preserveFocus: boolean): Promise<void> {
    if (this.view) {
      this.view.show(preserveFocus);
      return;
    }
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    if (preserveFocus) {
      await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    }
  }

  focusInput(): void {
    if (this.ready) {
      void this.post({ type: 'focusInput' });
    }
  }

  private post(message: ToWebview): Thenable<boolean> {
    return this.view ? this.view.webview.postMessage(message) : Promise.resolve(false);
  }

  private html(webview: vscode.Webview, root: vscode.Uri): string {
    const nonce = makeNonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>Smol Instruments</title>
</head>
<body>
<div id="app" data-testid="smol-chat"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

export function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => chars[b % chars.length]).join('');
}
