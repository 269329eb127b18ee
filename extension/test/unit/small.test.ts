import { describe, expect, it } from 'vitest';
import { parseFromWebview } from '../../src/chat/messages';
import { ChatStore, newId } from '../../src/chat/store';
import { initialState } from '../../src/chat/state';
import { RestartBackoff } from '../../src/client/backoff';
import { describeSelection, effectiveLines } from '../../src/commands/askAboutSelection';
import { closeOpenFence, renderMarkdown } from '../../webview/markdown';

describe('restart backoff', () => {
  it('doubles the delay up to the cap, then gives up after the last attempt', () => {
    const backoff = new RestartBackoff({ initialMs: 1000, maxMs: 5000, maxAttempts: 5, stableMs: 60_000 });
    const delays = [];
    for (let i = 0; i < 6; i += 1) {
      backoff.started(i);
      delays.push(backoff.crashed(i + 10));
    }
    expect(delays).toEqual([1000, 2000, 4000, 5000, 5000, undefined]);
    expect(backoff.crashesInARow).toBe(5);
  });

  it('starts counting again after a daemon that stayed up', () => {
    const backoff = new RestartBackoff({ initialMs: 1000, maxMs: 30_000, maxAttempts: 6, stableMs: 60_000 });
    backoff.started(0);
    expect(backoff.crashed(10)).toBe(1000);
    backoff.started(20);
    expect(backoff.crashed(30)).toBe(2000);
    backoff.started(40);
    expect(backoff.crashed(40 + 60_000)).toBe(1000);
  });
});

describe('messages from the webview', () => {
  it('accepts well-formed ones only', () => {
    expect(parseFromWebview({ type: 'send', text: 'hi' })).toEqual({ type: 'send', text: 'hi' });
    expect(parseFromWebview({ type: 'answerApproval', approvalId: 'a', answer: 'Run' })).toBeDefined();
    expect(parseFromWebview({ type: 'send' })).toBeUndefined();
    expect(parseFromWebview({ type: 'acceptPatch', patchId: 3 })).toBeUndefined();
    expect(parseFromWebview({ type: 'openContext', uri: 'file:///a', line: 'x' })).toBeUndefined();
    expect(parseFromWebview({ type: 'rm -rf' })).toBeUndefined();
    expect(parseFromWebview(null)).toBeUndefined();
    expect(parseFromWebview('send')).toBeUndefined();
  });
});

describe('the store', () => {
  it('tells listeners each action with the new and previous state', () => {
    const store = new ChatStore(initialState('a', 0));
    const seen: string[] = [];
    const sub = store.subscribe((action, state, previous) => seen.push(`${action.type}:${previous.activeId}->${state.activeId}`));
    store.dispatch({ type: 'turn/start', conversationId: 'a', turnId: 't', question: 'q', context: [], now: 1 });
    store.dispatch({ type: 'conversation/new', id: 'b', now: 2 });
    sub.dispose();
    store.dispatch({ type: 'conversation/select', id: 'a' });
    expect(seen).toEqual(['turn/start:a->a', 'conversation/new:a->b']);
  });

  it('makes short unique ids', () => {
    const ids = new Set(Array.from({ length: 200 }, () => newId()));
    expect(ids.size).toBe(200);
    expect([...ids][0]).toMatch(/^[a-z0-9]{12}$/);
  });
});

describe('ask about selection', () => {
  it('describes the lines', () => {
    expect(describeSelection('calc.py', 4, 6)).toBe('lines 4-6 of calc.py');
    expect(describeSelection('calc.py', 4, 4)).toBe('line 4 of calc.py');
  });

  it('does not count a line the selection ends at the start of', () => {
    expect(effectiveLines({ start: { line: 3 }, end: { line: 6, character: 0 } })).toEqual([4, 6]);
    expect(effectiveLines({ start: { line: 3 }, end: { line: 5, character: 10 } })).toEqual([4, 6]);
    expect(effectiveLines({ start: { line: 3 }, end: { line: 3, character: 0 } })).toEqual([4, 4]);
  });
});

describe('markdown in the panel', () => {
  it('never renders the model output as HTML', () => {
    const html = renderMarkdown('Hello <script>alert(1)</script> <img src=x onerror=alert(1)>');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;');
  });

  it('refuses javascript: links', () => {
    expect(renderMarkdown('[x](javascript:alert(1))')).not.toContain('href="javascript:');
  });

  it('closes a code block that is still streaming', () => {
    expect(closeOpenFence('Let me look:\n```python\nprint(1)')).toBe('Let me look:\n```python\nprint(1)\n```');
    expect(closeOpenFence('```python\nx\n```')).toBe('```python\nx\n```');
    expect(renderMarkdown('```python\nprint(1)')).toContain('<pre><code class="language-python">print(1)');
  });
});
