/**
 * What the scripted model answers in each end-to-end scenario: replies shaped like a local
 * 7B coder's (a thought, then a ```python block), streamed in small deltas with a delay so the
 * panel visibly streams.
 */

import type { ScriptTurn } from '../support/env';

const streamed = (reply: string, extra: Partial<Exclude<ScriptTurn, string>> = {}): ScriptTurn => ({ reply, chunk_chars: 6, delta_delay_s: 0.015, ...extra });

const block = (code: string, before: string) => `${before}\n\`\`\`python\n${code}\n\`\`\``;

export const FIX_ANSWER = 'add() returns a - b; it should return a + b. I proposed a patch: accept it in the editor.';

/** Ask about `add`: read the file, propose the fix, answer. */
export function askAboutAdd(question: string): ScriptTurn[] {
  return [
    streamed(block('content = read_file(path="calc.py")\nprint(content)', 'Thought: I will read calc.py to see what `add` does.'), { expect_user_contains: question }),
    streamed(
      block(
        'patch = propose_patch(\n    path="calc.py",\n    old_text="    return a - b",\n    new_text="    return a + b",\n    description="add() must add, not subtract",\n)\nprint(patch)',
        'The function returns `a - b` instead of `a + b`, which is why `test_add` fails. I will propose a patch.',
      ),
      { expect_user_contains: 'return a - b' },
    ),
    streamed(block(`final_answer(${JSON.stringify(FIX_ANSWER)})`, 'The patch is proposed and validated.'), { expect_user_contains: 'patch_id' }),
  ];
}

export const MEAN_ANSWER = 'mean() raises a clear error on an empty list; I proposed a friendlier message.';

/** Ask about `mean` (from the lightbulb): propose a new error message, answer. */
export function askAboutMean(): ScriptTurn[] {
  return [
    streamed(
      block(
        'patch = propose_patch(\n    path="calc.py",\n    old_text=\'raise ValueError("mean() of an empty list")\',\n    new_text=\'raise ValueError("mean() needs at least one value")\',\n    description="a clearer error for an empty list",\n)\nprint(patch)',
        'Thought: the error message could say what is needed.',
      ),
    ),
    streamed(block(`final_answer(${JSON.stringify(MEAN_ANSWER)})`, 'Done.'), { expect_user_contains: 'patch_id' }),
  ];
}

export const RISKY_COMMAND = 'pip install requests';
export const DENIED_ANSWER = 'I did not install requests: you denied the command.';

/** A command the policy puts to the user, then an answer that takes the decision into account. */
export function installPackage(): ScriptTurn[] {
  return [
    streamed(block(`result = run_cmd(command=${JSON.stringify(RISKY_COMMAND)})\nprint(result)`, 'Thought: I need the requests package.')),
    streamed(block(`final_answer(${JSON.stringify(DENIED_ANSWER)})`, 'The command was not approved.'), { expect_user_contains: 'APPROVAL_DENIED' }),
  ];
}

/** A file with two functions to fix, far enough apart to be two hunks of one patch. */
export const SHAPES = 'def area(w, h):\n    return w + h\n\n\ndef describe():\n    return "shapes"\n\n\ndef perimeter(w, h):\n    return w * h\n';
export const SHAPES_AREA_FIXED = SHAPES.replace('return w + h', 'return w * h');
export const TWO_HUNK_SUMMARY = 'fix area and perimeter';

const SHAPES_DIFF = [
  '--- a/shapes.py',
  '+++ b/shapes.py',
  '@@ -1,3 +1,3 @@',
  ' def area(w, h):',
  '-    return w + h',
  '+    return w * h',
  ' ',
  '@@ -9,2 +9,2 @@',
  ' def perimeter(w, h):',
  '-    return w * h',
  '+    return 2 * (w + h)',
  '',
].join('\n');

export const TWO_HUNK_ANSWER = 'area() and perimeter() had their formulas swapped; I proposed one patch with two hunks.';

/** Propose one patch with two hunks in shapes.py (`file` names a copy), then answer. A later
 * turn of the same chat needs an answer of its own: the agent sends back an answer that repeats
 * the previous turn's word for word (agent/answers.py). */
export function twoHunkFix(file = 'shapes.py', summary = TWO_HUNK_SUMMARY, answer = TWO_HUNK_ANSWER): ScriptTurn[] {
  const diff = SHAPES_DIFF.split('shapes.py').join(file);
  return [
    streamed(
      block(`patch = propose_patch_unified(diff=${JSON.stringify(diff)}, description=${JSON.stringify(summary)})\nprint(patch)`, `Thought: both formulas in ${file} are wrong; one patch fixes them.`),
    ),
    streamed(block(`final_answer(${JSON.stringify(answer)})`, 'Proposed.'), { expect_user_contains: 'patch_id' }),
  ];
}
