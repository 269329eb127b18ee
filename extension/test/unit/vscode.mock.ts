/**
 * The parts of the `vscode` module the unit-tested code touches, as plain objects and vi.fn()s
 * (vitest aliases `vscode` to this file). Tests set return values on the fns they care about.
 */
import { vi } from 'vitest';

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<(value: T) => void>();
  event = (listener: (value: T) => void) => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c as number, d as number) : (b as Position);
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; arguments?: unknown[] },
  ) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query = '',
  ) {}
  static parse(value: string): Uri {
    const match = /^([a-z][a-z0-9+.-]*):(?:\/\/[^/]*)?([^?#]*)(?:\?([^#]*))?/i.exec(value);
    return match ? new Uri(match[1], decodeURIComponent(match[2]), match[3] ?? '') : new Uri('file', value);
  }
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static from(parts: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path, parts.query ?? '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}${this.query ? `?${this.query}` : ''}`;
  }
}

export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}

export enum DecorationRangeBehavior {
  OpenOpen = 0,
  ClosedClosed = 1,
  OpenClosed = 2,
  ClosedOpen = 3,
}

export class MarkdownString {
  value = '';
  appendMarkdown(value: string): MarkdownString {
    this.value += value;
    return this;
  }
  appendCodeblock(code: string, language = ''): MarkdownString {
    this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`;
    return this;
  }
}

let decorationTypes = 0;

export const window = {
  showErrorMessage: vi.fn(() => Promise.resolve(undefined)),
  showWarningMessage: vi.fn(() => Promise.resolve(undefined)),
  showInformationMessage: vi.fn(() => Promise.resolve(undefined)),
  showInputBox: vi.fn(() => Promise.resolve(undefined)),
  showQuickPick: vi.fn(() => Promise.resolve(undefined)),
  createOutputChannel: vi.fn(() => ({ info: vi.fn(), warn: vi.fn(), error: vi.fn(), show: vi.fn(), dispose: vi.fn() })),
  createTextEditorDecorationType: vi.fn(() => ({ key: `decoration-${decorationTypes++}`, dispose: vi.fn() })),
  onDidChangeVisibleTextEditors: vi.fn(() => new Disposable()),
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [] as unknown[],
};

export const workspace = {
  workspaceFolders: undefined as unknown,
  isTrusted: true,
  onDidGrantWorkspaceTrust: vi.fn(() => new Disposable()),
  onDidChangeTextDocument: vi.fn(() => new Disposable()),
  onDidCloseTextDocument: vi.fn(() => new Disposable()),
  textDocuments: [] as unknown[],
  getConfiguration: vi.fn(() => ({ get: (_k: string, d: unknown) => d, inspect: () => undefined })),
  getWorkspaceFolder: vi.fn(() => undefined),
  asRelativePath: vi.fn((uri: Uri | string) => (typeof uri === 'string' ? uri : uri.path.split('/').pop() ?? '')),
};

export const commands = {
  executeCommand: vi.fn(() => Promise.resolve(undefined)),
  registerCommand: vi.fn(() => new Disposable()),
};

export const env = { openExternal: vi.fn(() => Promise.resolve(true)) };
export const extensions = { getExtension: vi.fn(() => undefined) };
