/** Protocol objects as the daemon sends them (shapes from docs/protocol.md). */

import type { Patch, SmolEvent } from '../../src/protocol';

export const CALC_URI = 'file:///work/proj/calc.py';

/** The sample project's fix: line 6 (0-based 5) `    return a - b` → `    return a + b`. */
export function patch(overrides: Partial<Patch> = {}): Patch {
  return {
    id: 'p1',
    sessionId: 's1',
    summary: 'add() must add, not subtract',
    status: 'pending',
    files: [
      {
        uri: CALC_URI,
        path: 'calc.py',
        diff: '--- a/calc.py\n+++ b/calc.py\n@@ -6 +6 @@\n-    return a - b\n+    return a + b\n',
        baseHash: 'sha256-of-calc.py',
        hunks: [{ id: 0, status: 'pending', range: { start: { line: 5, character: 0 }, end: { line: 6, character: 0 } }, newText: '    return a + b\n', added: 1, removed: 1 }],
      },
    ],
    validation: { backend: 'local', applies: true, checks: [{ command: 'python3 -m py_compile calc.py', passed: true, output: '' }] },
    added: 1,
    removed: 1,
    ...overrides,
  };
}

type EventBody = SmolEvent extends infer E ? (E extends SmolEvent ? Omit<E, 'sessionId' | 'seq'> : never) : never;

/** Numbered events of one session, as `smol/event` delivers them. */
export function events(sessionId: string, bodies: EventBody[], firstSeq = 1): SmolEvent[] {
  return bodies.map((body, i) => ({ ...body, sessionId, seq: firstSeq + i }) as SmolEvent);
}

/** A typical run: read the file, propose the patch, answer. */
export function fixRun(sessionId = 's1'): SmolEvent[] {
  return events(sessionId, [
    { kind: 'step', step: 1, maxSteps: 25 },
    { kind: 'text', text: 'Thought: I will read ' },
    { kind: 'text', text: 'calc.py.\n```python\nprint(read_file(path="calc.py"))\n```' },
    { kind: 'code', step: 1, code: 'print(read_file(path="calc.py"))' },
    { kind: 'tool', step: 1, name: 'read_file', args: { path: 'calc.py' }, durationMs: 3.2 },
    { kind: 'observation', step: 1, text: 'def add(a, b):\n    return a - b', truncated: false },
    { kind: 'step', step: 2, maxSteps: 25 },
    { kind: 'text', text: 'Proposing the fix.' },
    { kind: 'tool', step: 2, name: 'propose_patch', args: { path: 'calc.py' }, durationMs: 120 },
    { kind: 'patch', patch: patch({ sessionId }) },
    { kind: 'observation', step: 2, text: "{'patch_id': 'p1'}", truncated: false },
    { kind: 'step', step: 3, maxSteps: 25 },
    { kind: 'text', text: 'Done.' },
    { kind: 'final', answer: 'add() subtracts; I proposed a patch.', status: 'completed' },
  ]);
}
