/**
 * VS Code settings → the daemon's settings.
 *
 * Every daemon setting (`.env.example`, MODEL_ID ...) has a VS Code setting of the same name in
 * camelCase (`smolInstruments.modelId`). Only the values the user has set in VS Code are sent,
 * so the daemon's environment and the user's settings file still decide the rest.
 *
 * The settings that decide what runs, what is allowed, or where code and prompts go
 * (USER_ONLY_SETTINGS) are read from the user's own settings only: a repository's
 * `.vscode/settings.json` (workspace or folder scope) never sets them. package.json declares
 * them `"scope": "machine"` and restricted in untrusted workspaces, so VS Code says so too.
 */

import type { InitializationOptions } from './protocol';

export const SECTION = 'smolInstruments';

/** The daemon's settings in camelCase, in `.env.example` order. */
export const DAEMON_SETTINGS = [
  'modelId',
  'modelApiBase',
  'modelApiKey',
  'modelTemperature',
  'modelMaxTokens',
  'modelNumCtx',
  'modelTimeoutS',
  'modelBackend',
  'modelFile',
  'modelThreads',
  'modelEmbeddedPort',
  'modelStartTimeoutS',
  'modelWarmUp',
  'modelAutoPull',
  'modelCacheDir',
  'modelCatalog',
  'agentMaxSteps',
  'phoenixEnabled',
  'phoenixEndpoint',
  'phoenixProject',
  'otelExporterOtlpEndpoint',
  'validationMaxChars',
  'validationMaxLines',
  'validationMaxLineRange',
  'truncationMaxChars',
  'truncationMaxLines',
  'truncationMaxListItems',
  'logLevel',
  'logFile',
  'suppressWarnings',
  'commandTimeoutS',
  'approvalTimeoutS',
  'policyAllowRepoLoosening',
  'commandContainment',
  'commandReadPaths',
  'sandboxBackend',
  'sandboxImage',
  'sandboxCheckCommand',
  'sandboxCheckTests',
  'sandboxTimeoutS',
  'sandboxMemory',
  'sandboxPidsLimit',
  'sandboxCpus',
] as const;

export type DaemonSettingName = (typeof DAEMON_SETTINGS)[number];

/** Settings of the extension itself, never sent to the daemon. */
export const EXTENSION_SETTINGS = ['pythonPath', 'saveAfterAccept', 'traceViewerUrl'] as const;

/**
 * Settings a repository may not set: the Python that runs the daemon, where the model and the
 * traces are (and the key), which model file runs and where it comes from, the log file, the
 * check command and the sandbox that runs it, containment, policy loosening. Only the user's
 * (global) value counts.
 */
export const USER_ONLY_SETTINGS: ReadonlySet<string> = new Set([
  'pythonPath',
  'traceViewerUrl',
  'modelId',
  'modelApiBase',
  'modelApiKey',
  'phoenixEndpoint',
  'otelExporterOtlpEndpoint',
  'logFile',
  'policyAllowRepoLoosening',
  'sandboxBackend',
  'sandboxImage',
  'sandboxCheckCommand',
  'commandContainment',
  'commandReadPaths',
  'modelFile',
  'modelAutoPull',
  'modelCacheDir',
  'modelCatalog',
]);

/** What `WorkspaceConfiguration.inspect` tells about one setting (the parts used here). */
export interface InspectedValue {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type Inspect = (name: string) => InspectedValue | undefined;

/** MODEL_API_BASE for modelApiBase. */
export function envName(camel: string): string {
  return camel.replace(/([A-Z])/g, '_$1').toUpperCase();
}

/** modelApiBase for MODEL_API_BASE. */
export function camelName(env: string): string {
  const [head, ...rest] = env.toLowerCase().split('_');
  return head + rest.map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('');
}

/**
 * The value set in VS Code (folder over workspace over user), or undefined when only defaulted.
 * With `userOnly`, only the user's own value counts: what a repository's settings say is ignored.
 */
export function explicitValue(inspected: InspectedValue | undefined, userOnly = false): unknown {
  if (!inspected) {
    return undefined;
  }
  const scopes = userOnly ? [inspected.globalValue] : [inspected.workspaceFolderValue, inspected.workspaceValue, inspected.globalValue];
  for (const value of scopes) {
    if (value !== undefined && value !== null) {
      return value;
    }
  }
  return undefined;
}

/**
 * The settings object sent as `initializationOptions.settings` and in
 * `workspace/didChangeConfiguration`: camelCase keys, only explicitly set values; an empty
 * string means "not set" (the daemon treats it so too).
 */
export function daemonSettings(inspect: Inspect): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const name of DAEMON_SETTINGS) {
    const value = explicitValue(inspect(name), USER_ONLY_SETTINGS.has(name));
    if (value === undefined || (typeof value === 'string' && value.trim() === '')) {
      continue;
    }
    settings[name] = value;
  }
  return settings;
}

/** A user-only setting of the extension: the user's value, else the default, else `fallback`. */
export function userValue<T>(inspected: InspectedValue | undefined, fallback: T): T {
  const value = explicitValue(inspected, true) ?? inspected?.defaultValue;
  return value === undefined || value === null ? fallback : (value as T);
}

/** `initializationOptions`: the settings, whether the folder is trusted, structured approvals. */
export function initializationOptions(settings: Record<string, unknown>, trusted: boolean): InitializationOptions {
  return { settings, trusted, smolApproval: true };
}

/**
 * `workspace/didChangeConfiguration` params: the section under `settings`, as VS Code's own
 * configuration sync sends it (the daemon also takes `{settings: {settings: {...}}}`).
 */
export function didChangeConfigurationParams(settings: Record<string, unknown>): { settings: Record<string, unknown> } {
  return { settings: { [SECTION]: settings } };
}

/** Settings the daemon reads once, before any client message (its log): passed as environment too. */
export const STARTUP_SETTINGS: readonly DaemonSettingName[] = ['logFile', 'logLevel'];

/** LOG_FILE=... for the daemon's process, from the settings the user set in VS Code. */
export function startupEnvironment(settings: Record<string, unknown>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of STARTUP_SETTINGS) {
    const value = settings[name];
    if (value !== undefined && value !== null && value !== '') {
      env[envName(name)] = String(value);
    }
  }
  return env;
}

/** Where spans go, as the daemon decides it: OTEL_EXPORTER_OTLP_ENDPOINT wins over PHOENIX_ENDPOINT. */
export function tracesEndpoint(settings: Record<string, unknown>): string {
  const otel = settings.otelExporterOtlpEndpoint;
  if (typeof otel === 'string' && otel) {
    return otel;
  }
  const phoenix = settings.phoenixEndpoint;
  return typeof phoenix === 'string' && phoenix ? phoenix : 'http://localhost:6006/v1/traces';
}

/**
 * The URL template of a run's trace (`{traceId}` is replaced): the traceViewerUrl setting, else
 * Phoenix at the traces endpoint's host. Phoenix redirects /redirects/traces/<id> to the trace.
 */
export function traceUrlTemplate(viewerSetting: unknown, settings: Record<string, unknown>): string {
  if (typeof viewerSetting === 'string' && viewerSetting.trim()) {
    const template = viewerSetting.trim();
    return template.includes('{traceId}') ? template : `${template.replace(/\/$/, '')}/{traceId}`;
  }
  try {
    const url = new URL(tracesEndpoint(settings));
    return `${url.protocol}//${url.host}/redirects/traces/{traceId}`;
  } catch {
    return 'http://localhost:6006/redirects/traces/{traceId}';
  }
}

/**
 * The trace URL template as this editor's browser reaches it. code-server serves a localhost
 * port through its own proxy (`http://host:8080/proxy/6006/`), and its `asExternalUri` (which
 * `openExternal` applies too) keeps only the port of a localhost URL, dropping its path. So the
 * template's root alone is resolved (`resolve`: vscode.env.asExternalUri) and its path put back;
 * a URL that stays as it is (desktop VS Code, a remote viewer) is kept. Phoenix must then serve
 * under that path (PHOENIX_HOST_ROOT_PATH=/proxy/6006, which .ci/up sets for code-server).
 */
export async function externalTraceTemplate(template: string, resolve: (url: string) => Thenable<string> | Promise<string>): Promise<string> {
  let root: string;
  try {
    const url = new URL(template.split('{traceId}').join('trace'));
    root = `${url.protocol}//${url.host}/`;
  } catch {
    return template;
  }
  if (!template.startsWith(root)) {
    return template;
  }
  let external: string;
  try {
    external = await resolve(root);
  } catch {
    return template;
  }
  if (!external || external === root) {
    return template;
  }
  return `${external.replace(/\/?$/, '/')}${template.slice(root.length)}`;
}

export function traceUrl(template: string, traceId: string): string {
  return template.split('{traceId}').join(encodeURIComponent(traceId));
}

/** Whether the traces go anywhere (so the panel links a trace only when tracing is on). */
export function tracingEnabled(settings: Record<string, unknown>): boolean {
  return settings.phoenixEnabled !== false;
}
