/**
 * The thin layer over the `vscode` API that the logic modules call, so tests can replace it.
 * Nothing here decides anything.
 */

import * as vscode from 'vscode';
import { SECTION, USER_ONLY_SETTINGS, userValue, type Inspect } from './settings';
import { visible } from './visible';

export function configuration(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export function inspectSetting(): Inspect {
  const config = configuration();
  return (name) => config.inspect(name);
}

export function setting<T>(name: string, fallback: T): T {
  if (USER_ONLY_SETTINGS.has(name)) {
    return userValue(configuration().inspect(name), fallback); // never a repository's value
  }
  return configuration().get<T>(name, fallback);
}

/** Whether the user trusts the workspace (Workspace Trust); an untrusted one runs no command. */
export function isTrusted(): boolean {
  return vscode.workspace.isTrusted;
}

export function onDidGrantWorkspaceTrust(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(listener);
}

export function workspaceFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

export function registerCommand(command: string, callback: (...args: never[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(command, callback as (...args: unknown[]) => unknown);
}

export function executeCommand<T = unknown>(command: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(command, ...args);
}

export function setContext(key: string, value: unknown): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', key, value);
}

export function createLogOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

/** Non-modal notifications: they never take focus from the editor. What they say may carry
 * text from the daemon, the model or the repository: nothing in it stays invisible. */
export function showError(message: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(visible(message), ...actions);
}

export function showWarning(message: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(visible(message), ...actions);
}

export function showInfo(message: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(visible(message), ...actions);
}

export function openSettings(query: string): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', query);
}

export function openExternal(url: string): Thenable<boolean> {
  return vscode.env.openExternal(vscode.Uri.parse(url));
}

/** `url` as the user's browser reaches it (code-server: through its proxy). */
export async function asExternalUri(url: string): Promise<string> {
  return (await vscode.env.asExternalUri(vscode.Uri.parse(url))).toString(true);
}

/** The Python extension's active interpreter for `resource`, when that extension is installed. */
export async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) {
    return undefined;
  }
  try {
    const api = (extension.isActive ? extension.exports : await extension.activate()) as PythonExtensionApi | undefined;
    const environments = api?.environments;
    if (environments?.getActiveEnvironmentPath) {
      const active = environments.getActiveEnvironmentPath(resource);
      const resolved = environments.resolveEnvironment ? await environments.resolveEnvironment(active) : undefined;
      const executable = resolved?.executable?.uri?.fsPath ?? active?.path;
      if (executable) {
        return executable;
      }
    }
    const details = api?.settings?.getExecutionDetails?.(resource);
    return details?.execCommand?.[0];
  } catch {
    return undefined;
  }
}

/** The parts of ms-python.python's API used here (it is optional, so not a dependency). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(env: { path: string } | undefined): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
  };
}
