import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  camelName,
  DAEMON_SETTINGS,
  daemonSettings,
  envName,
  EXTENSION_SETTINGS,
  explicitValue,
  externalTraceTemplate,
  startupEnvironment,
  traceUrl,
  traceUrlTemplate,
  tracingEnabled,
  type InspectedValue,
} from '../../src/settings';

const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const envExample = readFileSync(join(root, '.env.example'), 'utf8');
const envNames = [...envExample.matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);

describe('settings map to camelCase initializationOptions', () => {
  it('converts names both ways', () => {
    expect(envName('modelApiBase')).toBe('MODEL_API_BASE');
    expect(envName('otelExporterOtlpEndpoint')).toBe('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(camelName('SANDBOX_PIDS_LIMIT')).toBe('sandboxPidsLimit');
    expect(camelName('MODEL_TIMEOUT_S')).toBe('modelTimeoutS');
  });

  it('has one VS Code setting per daemon setting in .env.example, and no other', () => {
    expect(envNames.length).toBeGreaterThan(20);
    expect([...DAEMON_SETTINGS].sort()).toEqual(envNames.map(camelName).sort());
    const contributed = Object.keys(manifest.contributes.configuration.properties).map((k: string) => k.replace(/^smolInstruments\./, ''));
    expect(contributed.sort()).toEqual([...DAEMON_SETTINGS, ...EXTENSION_SETTINGS].sort());
  });

  it('sends only what the user set, folder over workspace over user', () => {
    const values: Record<string, InspectedValue> = {
      modelId: { defaultValue: 'ollama_chat/qwen2.5-coder:7b', globalValue: 'openai/scripted' },
      modelApiBase: { defaultValue: 'http://localhost:11434' },
      agentMaxSteps: { defaultValue: 25, globalValue: 10, workspaceValue: 12, workspaceFolderValue: 7 },
      phoenixEnabled: { defaultValue: true, workspaceValue: false },
      modelApiKey: { defaultValue: '', globalValue: '   ' },
      pythonPath: { globalValue: '/x/python' },
    };
    expect(daemonSettings((name) => values[name])).toEqual({ modelId: 'openai/scripted', agentMaxSteps: 7, phoenixEnabled: false });
  });

  it('treats null as unset', () => {
    expect(explicitValue({ globalValue: null, workspaceValue: undefined })).toBeUndefined();
    expect(explicitValue(undefined)).toBeUndefined();
    expect(explicitValue({ globalValue: 0 })).toBe(0);
  });

  it('passes the start-up settings (the log) as environment too', () => {
    expect(startupEnvironment({ logFile: '/tmp/d.log', logLevel: 'DEBUG', modelId: 'x' })).toEqual({ LOG_FILE: '/tmp/d.log', LOG_LEVEL: 'DEBUG' });
  });
});

describe('trace links', () => {
  it('point at Phoenix on the traces endpoint host', () => {
    const template = traceUrlTemplate('', { phoenixEndpoint: 'http://127.0.0.1:6006/v1/traces' });
    expect(template).toBe('http://127.0.0.1:6006/redirects/traces/{traceId}');
    expect(traceUrl(template, 'abc123')).toBe('http://127.0.0.1:6006/redirects/traces/abc123');
  });

  it('follow OTEL_EXPORTER_OTLP_ENDPOINT when set, like the daemon', () => {
    expect(traceUrlTemplate(undefined, { otelExporterOtlpEndpoint: 'http://collector:4318', phoenixEndpoint: 'http://x:1/v1/traces' })).toBe('http://collector:4318/redirects/traces/{traceId}');
  });

  it('default to localhost:6006 and honour traceViewerUrl', () => {
    expect(traceUrlTemplate('', {})).toBe('http://localhost:6006/redirects/traces/{traceId}');
    expect(traceUrlTemplate('https://jaeger.local/trace/{traceId}', {})).toBe('https://jaeger.local/trace/{traceId}');
    expect(traceUrlTemplate('https://jaeger.local/trace/', {})).toBe('https://jaeger.local/trace/{traceId}');
  });

  it("go through the editor's proxy with their path kept (code-server drops it)", async () => {
    // What code-server's asExternalUri does with a localhost URL: its port's proxy root only.
    const codeServer = async (url: string) => {
      const port = new URL(url).port;
      return /^http:\/\/(localhost|127\.0\.0\.1):\d+\//.test(url) ? `http://127.0.0.1:8080/proxy/${port}/` : url;
    };
    const template = 'http://localhost:6006/redirects/traces/{traceId}';
    expect(await externalTraceTemplate(template, codeServer)).toBe('http://127.0.0.1:8080/proxy/6006/redirects/traces/{traceId}');
    // Desktop VS Code answers the same URL: nothing changes; nor for a viewer that is not local.
    expect(await externalTraceTemplate(template, async (url) => url)).toBe(template);
    expect(await externalTraceTemplate('https://jaeger.local/trace/{traceId}', codeServer)).toBe('https://jaeger.local/trace/{traceId}');
    // An editor that cannot say, or a template that is no URL, keeps the template.
    expect(await externalTraceTemplate(template, async () => { throw new Error('no'); })).toBe(template);
    expect(await externalTraceTemplate('', codeServer)).toBe('');
  });

  it('are off when tracing is off', () => {
    expect(tracingEnabled({ phoenixEnabled: false })).toBe(false);
    expect(tracingEnabled({})).toBe(true);
  });
});

describe('the manifest', () => {
  const commands = manifest.contributes.commands.map((c: { command: string }) => c.command);

  it('contributes the commands under the smolInstruments. prefix, none under the daemon prefix smol.', () => {
    for (const id of ['askAboutSelection', 'newConversation', 'stop', 'acceptPatch', 'rejectPatch', 'showPatchDiff', 'acceptAll', 'rejectAll', 'restartDaemon', 'showLog']) {
      expect(commands).toContain(`smolInstruments.${id}`);
    }
    expect(commands.filter((c: string) => c.startsWith('smol.'))).toEqual([]);
  });

  it('binds ask-about-selection to ctrl+alt+a / cmd+alt+a and the editor context menu', () => {
    const binding = manifest.contributes.keybindings.find((k: { command: string }) => k.command === 'smolInstruments.askAboutSelection');
    expect(binding).toMatchObject({ key: 'ctrl+alt+a', mac: 'cmd+alt+a' });
    expect(manifest.contributes.menus['editor/context'][0].command).toBe('smolInstruments.askAboutSelection');
  });

  it('has the chat webview view in its own activity-bar container', () => {
    expect(manifest.contributes.viewsContainers.activitybar[0].id).toBe('smolInstruments');
    expect(manifest.contributes.views.smolInstruments[0]).toMatchObject({ type: 'webview', id: 'smolInstruments.chat', name: 'Chat' });
    expect(manifest.engines.vscode).toBe('^1.90.0');
    expect(manifest.activationEvents).toContain('onStartupFinished');
  });
});
