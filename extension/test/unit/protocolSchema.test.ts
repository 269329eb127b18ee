/**
 * protocol.ts against the daemon's own types: the JSON Schema generated from the Python message
 * classes (extension/src/protocol.schema.json, kept current by tests/test_protocol_schema.py) is
 * compiled to TypeScript with json-schema-to-typescript, and tsc checks that every hand-written
 * type in protocol.ts is exactly the generated one: the same fields, the same optionality, the
 * same types. A field added, renamed, retyped or made optional on one side only fails here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..', '..');
const schemaPath = join(root, 'extension', 'src', 'protocol.schema.json');
const protocolPath = join(root, 'extension', 'src', 'protocol.ts');

/** Generated name → protocol.ts name, for every definition the daemon's schema has. */
export const PAIRS: Record<string, string> = {
  StepEvent: 'StepEvent',
  TextEvent: 'TextEvent',
  CodeEvent: 'CodeEvent',
  ToolEvent: 'ToolEvent',
  ObservationEvent: 'ObservationEvent',
  PatchEvent: 'PatchEvent',
  ProgressEvent: 'ProgressEvent',
  ApprovalEvent: 'ApprovalEvent',
  ErrorEvent: 'ErrorEvent',
  FinalEvent: 'FinalEvent',
  ErrorObject: 'ErrorObject',
  ChatParams: 'ChatParams',
  Selection: 'Selection',
  Range: 'Range',
  Position: 'Position',
  ChatResult: 'ChatResult',
  Usage: 'Usage',
  Patch: 'Patch',
  PatchFile: 'PatchFile',
  Hunk: 'Hunk',
  Validation: 'Validation',
  ValidationCheck: 'ValidationCheck',
  PatchesResult: 'PatchesResult',
  PatchCommandResult: 'PatchCommandResult',
  AcceptOptions: 'AcceptOptions',
  RejectOptions: 'RejectOptions',
  AskAboutSelectionArgs: 'AskAboutSelectionArgs',
  InitializationOptions: 'InitializationOptions',
  CommandApproval: 'CommandApproval',
  ApprovalAnswer: 'ApprovalAnswer',
};

/**
 * The TypeScript that must compile: each pair identical (`same`), with the fields only one side
 * has named (`keys`) and assignability both ways, so the
 * error says which field differs and how.
 */
export function checks(generatedModule: string, protocolModule: string): string {
  const lines = [
    `import type * as W from '${generatedModule}';`,
    `import type * as P from '${protocolModule}';`,
    'type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;',
    'declare function same<A, B>(check: Equals<A, B>): void;',
    'declare function keys<A, B>(check: [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : { onlyGenerated: Exclude<keyof A, keyof B>; onlyProtocolTs: Exclude<keyof B, keyof A> }): void;',
    'declare function value<T>(): T;',
  ];
  const pairs: Array<[string, string]> = [...Object.entries(PAIRS).map(([w, p]) => [`W.${w}`, `P.${p}`] as [string, string]), ["NonNullable<W.SmolProtocol['event']>", 'P.SmolEvent']];
  for (const [wire, mine] of pairs) {
    const n = lines.length;
    lines.push(`keys<${wire}, ${mine}>(true);`, `const _to_${n}: ${mine} = value<${wire}>();`, `const _from_${n}: ${wire} = value<${mine}>();`, `same<${wire}, ${mine}>(true);`);
  }
  return lines.join('\n') + '\n';
}

/** tsc's diagnostics for the checks, one line each (empty: protocol.ts matches the schema). */
export async function drift(protocolFile = protocolPath): Promise<string[]> {
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as JSONSchema;
  const generated = await compile(schema, 'SmolProtocol', { bannerComment: '', additionalProperties: false, unreachableDefinitions: true, format: false });
  const dir = mkdtempSync(join(tmpdir(), 'smol-protocol-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'wire.ts'), generated);
  writeFileSync(join(dir, 'check.ts'), checks('./wire', protocolFile.replace(/\.ts$/, '')));
  const program = ts.createProgram([join(dir, 'check.ts')], { strict: true, noEmit: true, noUnusedLocals: false, skipLibCheck: true, target: ts.ScriptTarget.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext, types: [] });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const line = where && d.file ? d.file.text.split('\n')[where.line] : '';
    return `${line.trim()}\n    ${ts.flattenDiagnosticMessageText(d.messageText, '\n    ')}`;
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('protocol.ts and the daemon schema', () => {
  it('pairs every message type the daemon declares', () => {
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as { $defs: Record<string, unknown> };
    expect(Object.keys(schema.$defs).sort()).toEqual(Object.keys(PAIRS).sort());
  });

  it('declares exactly the generated types', async () => {
    const problems = await drift();
    expect(problems.length, `protocol.ts differs from protocol.schema.json:\n${problems.join('\n')}\n`).toBe(0);
  }, 60_000);
});
