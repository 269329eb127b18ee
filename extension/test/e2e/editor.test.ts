/**
 * End to end in real VS Code: code-server with the packaged .vsix, Chromium driven by
 * playwright-core, the real daemon, and the scripted model standing in for the LLM.
 *
 * One editor session tells one story, in order:
 *   1. ask about a selection from the command palette → the answer streams into the panel →
 *      the proposed patch shows inline with its CodeLens → Accept → the file changed on disk;
 *   2. ask from the lightbulb (the daemon's code action) → reload the window → the patch is
 *      redrawn from smol/patches → Reject → the file is unchanged on disk;
 *   3. a risky command asks for approval in the panel (and as a notification) → Deny;
 *   4. Stop cancels a run that would never end;
 *   5. the daemon is killed → the extension restarts it → the chat works again;
 *   6. a patch with two hunks → Accept the first from its CodeLens → only that change is on
 *      disk and the second hunk is still drawn with its CodeLens → Reject it → nothing more
 *      changes; and a hunk made stale by an edit on disk does not block its sibling.
 * Screenshots go to test-artifacts/.
 */

import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, FrameLocator } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, daemonMissing, editorMissing, PYTHON, sampleProject, ScriptedModel, scriptedModelMissing, skipReason } from '../support/env';
import { closeSession, CodeServer, launchChromium, Workbench, WORKBENCH_SETTINGS } from './editor';
import { askAboutAdd, askAboutMean, DENIED_ANSWER, FIX_ANSWER, installPackage, MEAN_ANSWER, RISKY_COMMAND, SHAPES, SHAPES_AREA_FIXED, TWO_HUNK_ANSWER, TWO_HUNK_SUMMARY, twoHunkFix } from './scripts';

const missing = skipReason(daemonMissing(), scriptedModelMissing(), editorMissing());

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting until ${what}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(missing)('the extension in code-server', () => {
  let model: ScriptedModel;
  let project: string;
  let editor: CodeServer;
  let browser: Browser;
  let wb: Workbench;
  const calc = () => readFileSync(join(project, 'calc.py'), 'utf8');

  beforeAll(async () => {
    model = await ScriptedModel.start();
    project = sampleProject('smol-e2e-');
    editor = await CodeServer.start(project, {
      ...WORKBENCH_SETTINGS,
      'smolInstruments.pythonPath': PYTHON,
      // The daemon settings travel as initializationOptions: this is the mapping under test too.
      'smolInstruments.modelId': 'openai/scripted',
      'smolInstruments.modelApiBase': model.baseUrl,
      'smolInstruments.modelApiKey': 'scripted',
      'smolInstruments.phoenixEnabled': false,
      'smolInstruments.sandboxBackend': 'local',
      'smolInstruments.approvalTimeoutS': 120,
      'smolInstruments.logFile': join(ARTIFACTS, 'daemon.log'),
    });
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    wb = new Workbench(page);
    const started = Date.now();
    await wb.open(editor.url);
    console.log(`workbench ready in ${Date.now() - started} ms`);
    await wb.screenshot('01-workbench');
  });

  afterAll(async () => {
    await closeSession({ wb, browser, editor, project });
    const failures = model ? await model.failures().catch(() => []) : [];
    await model?.stop();
    expect(failures).toEqual([]);
  });

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && wb) {
      await wb.screenshot(`failed-${context.task.name.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`).catch(() => undefined);
    }
  });

  /** Send a message from the panel and wait for this run's answer (earlier ones may say the same). */
  async function ask(message: string, answer: string): Promise<FrameLocator> {
    const chat = await wb.showChat();
    const answers = chat.locator('.final-answer', { hasText: answer.slice(0, 30) });
    const before = await answers.count();
    await chat.locator('#input').fill(message);
    await chat.locator('#input').press('Enter');
    await expect.poll(() => answers.count(), { timeout: 90_000 }).toBe(before + 1);
    return chat;
  }

  it('asks about a selection, streams the answer, shows the patch inline, and Accept writes the file', async () => {
    const question = 'Why does test_add fail?';
    await model.addTurns(askAboutAdd(question));
    await wb.openFile('calc.py');
    await wb.selectLines(4, 6);
    await wb.command('Smol Instruments: Ask Agent about Selection');
    await wb.answerInputBox(question, 'Ask the agent about lines 4-6 of calc.py');

    const chat: FrameLocator = wb.chat();
    await chat.locator('.turn .question-text', { hasText: question }).waitFor({ timeout: 60_000 });
    await chat.locator('.context .chip', { hasText: 'calc.py:4-6' }).waitFor();
    // Streaming: the step's text is on screen while the run is still going, before the answer.
    await chat.locator('.turn.running details.step[open] .md.stream').last().waitFor({ timeout: 60_000 });
    expect(await chat.locator('.final-answer').count()).toBe(0);
    await wb.screenshot('02-streaming');

    await chat.locator('.final-answer', { hasText: FIX_ANSWER.slice(0, 30) }).waitFor({ timeout: 90_000 });
    await chat.locator('.turn.completed .turn-footer', { hasText: 'completion tokens' }).waitFor();
    await chat.locator('.patch-card.pending', { hasText: 'add() must add, not subtract' }).waitFor();
    // The patch in the editor: CodeLens on the hunk and the count in the status bar.
    await wb.codeLens(/Agent: add\(\) must add, not subtract \(\+1 −1\)/).waitFor({ timeout: 30_000 });
    await wb.codeLens(/^\s*Reject$/).waitFor();
    await wb.statusBar('1 agent patch').waitFor();
    expect(calc()).toContain('return a - b'); // nothing written yet
    await wb.screenshot('03-inline-diff');

    await wb.codeLens(/^\s*Accept$/).click();
    await until(() => calc().includes('return a + b'), 'the accepted patch is on disk');
    expect(calc()).not.toContain('return a - b');
    await chat.locator('.patch-card.accepted').waitFor({ timeout: 15_000 });
    await expect.poll(() => wb.codeLens(/^\s*Accept$/).count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => wb.statusBar('agent patch').count(), { timeout: 15_000 }).toBe(0);
    // Saved, not left dirty.
    await expect.poll(() => wb.page.locator('.tabs-container .tab.active.dirty').count(), { timeout: 10_000 }).toBe(0);
    await wb.screenshot('04-accepted');
  });

  it('asks from the lightbulb, redraws the patch after a window reload, and Reject leaves the file alone', async () => {
    await model.addTurns(askAboutMean());
    await wb.openFile('calc.py');
    await wb.selectLines(9, 12);
    // The daemon's code action; the extension intercepts smol.askAboutSelection to ask the question.
    await wb.page.keyboard.press('Control+.');
    const action = wb.page.locator('.action-widget .monaco-list-row', { hasText: 'Ask agent about selection' });
    await action.waitFor({ timeout: 20_000 });
    await wb.page.keyboard.press('Enter'); // the only action there, already highlighted
    await wb.answerInputBox('Is the empty-list error helpful?', 'Ask the agent about lines 9-12 of calc.py');
    const chat = wb.chat();
    await chat.locator('.final-answer', { hasText: MEAN_ANSWER.slice(0, 30) }).waitFor({ timeout: 90_000 });
    await wb.codeLens(/Agent: a clearer error for an empty list/).waitFor({ timeout: 30_000 });
    const before = calc();
    // Diff: the proposed file side by side, from the smol-patch: content provider.
    await wb.codeLens(/^\s*Diff$/).click();
    const diffTab = wb.page.locator('.tabs-container .tab', { hasText: 'agent: a clearer error for an empty list' });
    await diffTab.waitFor({ timeout: 20_000 });
    await wb.page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'mean() needs at least one value' }).waitFor({ timeout: 20_000 });
    await wb.screenshot('05-diff-tab');
    await wb.page.keyboard.press('Control+W'); // back to calc.py
    await wb.page.locator('.tabs-container .tab.active', { hasText: 'calc.py' }).waitFor();

    await wb.command('Developer: Reload Window');
    await wb.page.waitForTimeout(1500);
    await wb.ready();
    const redrawn = wb.codeLens(/^\s*Reject$/);
    if (!(await redrawn.waitFor({ timeout: 20_000 }).then(() => true, () => false))) {
      // A code-server quirk, not ours: after a reload it sometimes hands the extension host no
      // user settings until settings.json changes. The extension shows the error and starts
      // as soon as the settings arrive; a rewrite makes them arrive.
      console.warn('no daemon 20 s after the reload: rewriting settings.json (code-server quirk)');
      await wb.screenshot('06-after-reload-no-settings');
      editor.rewriteSettings();
      if (!(await redrawn.waitFor({ timeout: 40_000 }).then(() => true, () => false))) {
        // Seen once in CI on a loaded machine: the rewrite did not reach the extension host
        // either. The page loaded again gets a fresh extension host, which reads the settings.
        console.warn('no daemon 40 s after the rewrite: loading the page again');
        await wb.screenshot('06-after-rewrite-no-daemon');
        await wb.page.reload();
        await wb.ready();
      }
    }
    await redrawn.waitFor({ timeout: 60_000 }); // redrawn from smol/patches
    const panel = await wb.showChat();
    await panel.locator('.pending .patch-card.pending', { hasText: 'a clearer error for an empty list' }).waitFor({ timeout: 30_000 });
    await wb.screenshot('06-after-reload');

    await wb.codeLens(/^\s*Reject$/).click();
    await expect.poll(() => wb.codeLens(/^\s*Reject$/).count(), { timeout: 20_000 }).toBe(0);
    await wb.page.waitForTimeout(500);
    expect(calc()).toBe(before);
    expect(calc()).toContain('mean() of an empty list');
    await wb.screenshot('07-rejected');
  }, 420_000); // room for the reload fallbacks on a loaded machine

  it('puts a risky command to the user in the panel, and the panel answers the daemon', async () => {
    await model.addTurns(installPackage());
    const chat = await wb.showChat();
    await chat.locator('#input').fill('Install the requests package');
    await chat.locator('#input').press('Enter');
    const prompt = chat.locator('.approval.pending', { hasText: RISKY_COMMAND });
    await prompt.waitFor({ timeout: 90_000 });
    await expect.poll(() => prompt.locator('.policy').textContent()).toContain('Policy');
    // The same request shows as a VS Code notification too.
    await wb.notification(`The agent wants to run: ${RISKY_COMMAND}`).waitFor({ timeout: 15_000 });
    await wb.screenshot('08-approval');

    await prompt.locator('button', { hasText: 'Deny' }).click();
    await chat.locator('.approval.done', { hasText: RISKY_COMMAND }).waitFor({ timeout: 15_000 });
    await chat.locator('.final-answer', { hasText: DENIED_ANSWER.slice(0, 30) }).waitFor({ timeout: 90_000 });
    await chat.locator('.approval-note.denied', { hasText: RISKY_COMMAND }).waitFor({ state: 'attached' }); // in the collapsed step
    const requests = await model.requests();
    expect(ScriptedModel.promptText(requests[requests.length - 1])).toContain('APPROVAL_DENIED');
    await wb.screenshot('09-approval-denied');
    // VS Code cannot close a notification from code: it stays, and answering it now changes nothing.
    const toast = wb.notification(`The agent wants to run: ${RISKY_COMMAND}`);
    await toast.hover();
    await toast.locator('.codicon-notifications-clear').click();
    await expect.poll(() => toast.count(), { timeout: 10_000 }).toBe(0);
    await chat.locator('.approval.done', { hasText: 'Denied' }).waitFor();
  });

  it('stops a run from the Stop button ($/cancelRequest) and keeps the conversation history', async () => {
    await model.addTurns([{ reply: 'let me think about this for a long time, ', forever: true, delta_delay_s: 0.02 }]);
    const chat = await wb.showChat();
    await chat.locator('#new').click();
    await chat.locator('#input').fill('Think forever');
    await chat.locator('#input').press('Enter');
    await chat.locator('.turn.running details.step[open] .md.stream', { hasText: 'think about this' }).waitFor({ timeout: 60_000 });
    await chat.locator('#stop').click();
    await chat.locator('.turn.cancelled').waitFor({ timeout: 40_000 });
    await expect.poll(() => chat.locator('#send').isVisible()).toBe(true);
    // Every conversation of this window is in the history drop-down.
    expect(await chat.locator('#history option').count()).toBeGreaterThanOrEqual(2);
    await wb.screenshot('10-stopped');
  });

  it('restarts the daemon after a crash, and the chat works again', async () => {
    const daemon = daemonPid(project);
    expect(daemon).toBeDefined();
    process.kill(daemon!, 'SIGKILL');
    const chat = await wb.showChat();
    await chat.locator('.banner.restarting').waitFor({ state: 'attached', timeout: 20_000 });
    await expect.poll(() => daemonPid(project), { timeout: 30_000 }).not.toBe(daemon);
    await expect.poll(() => chat.locator('.banner').isHidden(), { timeout: 30_000 }).toBe(true);
    await model.addTurns([CRASH_RECOVERED]);
    await chat.locator('#input').fill('Are you back?');
    await chat.locator('#input').press('Enter');
    await chat.locator('.final-answer', { hasText: 'Back after a restart.' }).waitFor({ timeout: 60_000 });
  });

  it('accepts one hunk of a two-hunk patch from its CodeLens; the other stays drawn until rejected', async () => {
    writeFileSync(join(project, 'shapes.py'), SHAPES);
    const shapes = () => readFileSync(join(project, 'shapes.py'), 'utf8');
    await model.addTurns(twoHunkFix());
    const chat = await ask('Fix the formulas in shapes.py', TWO_HUNK_ANSWER);
    await wb.openFile('shapes.py');
    await wb.codeLens(new RegExp(`Agent: ${TWO_HUNK_SUMMARY}`)).waitFor({ timeout: 30_000 });
    await expect.poll(() => wb.codeLens(/^\s*Accept$/).count(), { timeout: 15_000 }).toBe(2);
    await wb.codeLens(/^\s*Accept all 2$/).waitFor();
    await wb.statusBar('1 agent patch (2 hunks)').waitFor();
    await wb.screenshot('11-two-hunks');

    await wb.codeLens(/^\s*Accept$/).first().click();
    await until(() => shapes() === SHAPES_AREA_FIXED, 'the first hunk alone is on disk');
    // The second hunk is still drawn, with its own Accept and Reject.
    await expect.poll(() => wb.codeLens(/^\s*Accept$/).count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => wb.codeLens(/^\s*Reject$/).count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => wb.codeLens(/Accept all/).count(), { timeout: 15_000 }).toBe(0);
    await wb.statusBar('1 agent patch').waitFor();
    await chat.locator('.patch-card.pending .hunks', { hasText: '1 accepted · 1 pending' }).waitFor({ timeout: 15_000 });
    await wb.screenshot('12-first-hunk-accepted');

    await wb.codeLens(/^\s*Reject$/).click();
    await expect.poll(() => wb.codeLens(/^\s*Reject$/).count(), { timeout: 20_000 }).toBe(0);
    await chat.locator('.patch-card.partial').waitFor({ timeout: 15_000 });
    await wb.page.waitForTimeout(500);
    expect(shapes()).toBe(SHAPES_AREA_FIXED);
    await wb.screenshot('13-second-hunk-rejected');
  });

  it('a hunk whose lines changed on disk is stale and does not block its sibling', async () => {
    writeFileSync(join(project, 'sizes.py'), SHAPES);
    const sizes = () => readFileSync(join(project, 'sizes.py'), 'utf8');
    const answer = 'sizes.py had the same two formulas swapped; one patch fixes both.';
    await model.addTurns(twoHunkFix('sizes.py', 'fix the sizes', answer));
    const chat = await ask('Fix the formulas in sizes.py', answer);
    await wb.openFile('sizes.py');
    await wb.codeLens(/Agent: fix the sizes/).waitFor({ timeout: 30_000 });
    // Someone else edits the second hunk's line on disk; the editor reloads the file.
    const edited = SHAPES.replace('    return w * h\n', '    return w * h  # checked by hand\n');
    writeFileSync(join(project, 'sizes.py'), edited);
    await wb.codeLens(/This file changed since the agent proposed this patch/).waitFor({ timeout: 30_000 });
    await wb.screenshot('14-file-changed');
    await wb.codeLens(/^\s*Accept what still applies$/).click();
    const expected = edited.replace('return w + h', 'return w * h');
    await until(() => sizes() === expected, 'the first hunk is written, the stale one is not');
    await wb.notification(/hunk 2 of the agent's patch "fix the sizes" no longer applied/).waitFor({ timeout: 15_000 });
    await wb.codeLens(/Stale agent hunk: fix the sizes/).waitFor({ timeout: 15_000 });
    await chat.locator('.patch-card.partial', { hasText: 'fix the sizes' }).waitFor({ timeout: 15_000 });
    expect(sizes()).toBe(expected);
    await wb.screenshot('15-stale-hunk');
  });
});


const CRASH_RECOVERED = '```python\nfinal_answer("Back after a restart.")\n```';

/** The daemon this editor started: `smol_instruments serve` running in the project folder. */
function daemonPid(project: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes('smol_instruments\0serve') && realpathSync(`/proc/${entry}/cwd`) === realpathSync(project)) {
        return Number(entry);
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

