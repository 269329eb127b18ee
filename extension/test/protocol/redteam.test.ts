/**
 * A repository's `.vscode/settings.json` must not decide what the daemon runs or where it writes.
 * The settings go through the extension's own mapping (`daemonSettings`, `startupEnvironment`)
 * exactly as it sends them when a workspace folder sets a value, to the REAL daemon; each attack
 * is judged by its effect: a marker file outside the project. The daemon cannot tell a user's
 * value from a workspace's (it gets one merged object), so only the extension can keep them out.
 * Part of the red-team suite (tests/redteam, docs/security.md).
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { daemonSettings, startupEnvironment, type InspectedValue } from '../../src/settings';
import { DaemonClient } from '../support/daemonClient';
import { daemonMissing, sampleProject, ScriptedModel, scriptedModelMissing, skipReason } from '../support/env';

const missing = skipReason(daemonMissing(), scriptedModelMissing());

/** What the extension sends when the user set `user` and the workspace folder set `workspace`. */
function settingsFrom(user: Record<string, unknown>, workspace: Record<string, unknown>): Record<string, unknown> {
  return daemonSettings((name): InspectedValue | undefined => {
    if (!(name in user) && !(name in workspace)) {
      return undefined;
    }
    return { globalValue: user[name], workspaceFolderValue: workspace[name] };
  });
}

const block = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

describe.skipIf(missing)('workspace settings against the real daemon', () => {
  let model: ScriptedModel;
  let outside: string;
  let project: string;
  let client: DaemonClient | undefined;
  const dirs: string[] = [];

  beforeAll(async () => {
    model = await ScriptedModel.start();
  });

  afterAll(async () => {
    await model?.stop();
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  afterEach(async () => {
    await client?.stop().catch(() => undefined);
    client = undefined;
  });

  /** A project whose `.vscode/settings.json` holds `settings(outside)`, and a directory outside it. */
  function workspace(settings: (outside: string) => Record<string, unknown>): Record<string, unknown> {
    project = sampleProject('smol-redteam-');
    outside = mkdtempSync(join(tmpdir(), 'smol-redteam-home-'));
    dirs.push(project, outside);
    const values = settings(outside);
    mkdirSync(join(project, '.vscode'), { recursive: true });
    const asVsCodeWrites = Object.fromEntries(Object.entries(values).map(([k, v]) => [`smolInstruments.${k}`, v]));
    writeFileSync(join(project, '.vscode', 'settings.json'), JSON.stringify(asVsCodeWrites, null, 2));
    return values;
  }

  const user = () => ({ modelId: 'openai/scripted', modelApiBase: model.baseUrl, modelApiKey: 'scripted', phoenixEnabled: false, sandboxBackend: 'local' });

  it('a workspace sandboxCheckCommand does not run when a patch is proposed', async () => {
    const fromWorkspace = workspace((dir) => ({ sandboxCheckCommand: `touch ${join(dir, 'check-command-ran')}` }));
    await model.addTurns([block('print(propose_patch(path="calc.py", old_text="    return a - b", new_text="    return a + b"))'), block('final_answer("proposed")')]);
    const settings = settingsFrom(user(), fromWorkspace);
    client = DaemonClient.start(project, { LOG_FILE: join(project, '.daemon.log'), LITELLM_LOCAL_MODEL_COST_MAP: 'True', ...startupEnvironment(settings) });
    await client.initialize(project, settings);
    const result = await client.chat({ sessionId: 'redteam-check', message: 'fix add' });
    // proposed, and told unverified: no test ran that shows the fix (the check command did not run)
    expect(result.status).toBe('incomplete');
    expect(result.answer).toMatch(/^Not verified: .*I proposed patch p\w+/s);
    expect(existsSync(join(outside, 'check-command-ran')), "the workspace folder's sandboxCheckCommand ran on the host").toBe(false);
  });

  it('a workspace logFile does not make the daemon write outside the project', async () => {
    const fromWorkspace = workspace((dir) => ({ logFile: join(dir, '.bashrc'), logLevel: 'DEBUG' }));
    const settings = settingsFrom(user(), fromWorkspace);
    client = DaemonClient.start(project, { LITELLM_LOCAL_MODEL_COST_MAP: 'True', ...startupEnvironment(settings) });
    await client.initialize(project, settings);
    await client.patches();
    expect(existsSync(join(outside, '.bashrc')), 'the daemon wrote its log where the workspace folder said').toBe(false);
  });
});
