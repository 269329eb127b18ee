/**
 * Which Python runs the daemon, and whether it can.
 *
 * Order: the `smolInstruments.pythonPath` setting, then the Python extension's active
 * environment (when that extension is installed), then `python3`. Each candidate is probed once:
 * its version (3.10 or newer) and `import smol_instruments`. When none fits, the message says
 * exactly what to do. Pure: spawning and the Python extension come in as functions.
 */

import { isAbsolute, relative, resolve } from 'node:path';

export type PythonSource = 'setting' | 'python-extension' | 'default';

export interface Candidate {
  python: string;
  source: PythonSource;
}

/** What the probe script prints, or why it could not run. */
export interface ProbeResult {
  /** [major, minor, micro] */
  version?: number[];
  executable?: string;
  /** smol_instruments.__version__ when it imports. */
  daemon?: string;
  /** The import error when it does not. */
  error?: string;
  /** The interpreter could not be started or printed nonsense. */
  spawnError?: string;
}

export type Probe = (python: string) => Promise<ProbeResult>;

export type Discovery =
  | { ok: true; python: string; source: PythonSource; version: string; daemonVersion: string }
  | { ok: false; message: string; tried: Array<Candidate & { problem: string }> };

export const MIN_VERSION: [number, number] = [3, 10];

export const SETUP_HINT =
  'Run `bash .ci/setup` in the smol-instruments checkout, or `pip install smol-instruments`, ' +
  'then set smolInstruments.pythonPath to that Python (the checkout\'s .venv/bin/python).';

/** Prints one JSON line; written to run on any Python so an old one still answers. */
export const PROBE_SCRIPT = [
  'import sys, json',
  'r = {"version": list(sys.version_info[:3]), "executable": sys.executable}',
  'try:',
  '    import smol_instruments',
  '    r["daemon"] = str(getattr(smol_instruments, "__version__", "unknown"))',
  'except Exception as e:',
  '    r["error"] = "%s: %s" % (type(e).__name__, e)',
  'print(json.dumps(r))',
].join('\n');

/** The command line that checks a Python: `python -c PROBE_SCRIPT`. */
export function probeArgs(): string[] {
  return ['-c', PROBE_SCRIPT];
}

/** Reads the probe's stdout. */
export function parseProbeOutput(stdout: string): ProbeResult {
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .pop();
  if (!line) {
    return { spawnError: `unexpected output: ${stdout.trim().slice(0, 200) || '(none)'}` };
  }
  try {
    return JSON.parse(line) as ProbeResult;
  } catch {
    return { spawnError: `unexpected output: ${line.slice(0, 200)}` };
  }
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` in the setting. */
export function expandPath(value: string, workspaceFolder: string | undefined, home: string): string {
  let out = value.trim();
  if (out === '~' || out.startsWith('~/')) {
    out = home + out.slice(1);
  }
  out = out.split('${userHome}').join(home);
  if (workspaceFolder !== undefined) {
    out = out.split('${workspaceFolder}').join(workspaceFolder);
  }
  return out;
}

/**
 * Whether `python` lies inside `folder`. In an untrusted folder such a Python is the
 * repository's own program, so it is not started.
 */
export function insideFolder(python: string, folder: string | undefined): boolean {
  if (!folder || !isAbsolute(python)) {
    return false;
  }
  const from = relative(resolve(folder), resolve(python));
  return from === '' || (!from.startsWith('..') && !isAbsolute(from));
}

export function candidates(setting: string | undefined, fromPythonExtension: string | undefined, defaultPython: string): Candidate[] {
  if (setting && setting.trim()) {
    return [{ python: setting.trim(), source: 'setting' }]; // an explicit choice is never second-guessed
  }
  const list: Candidate[] = [];
  if (fromPythonExtension) {
    list.push({ python: fromPythonExtension, source: 'python-extension' });
  }
  if (!list.some((c) => c.python === defaultPython)) {
    list.push({ python: defaultPython, source: 'default' });
  }
  return list;
}

function describe(candidate: Candidate): string {
  switch (candidate.source) {
    case 'setting':
      return `${candidate.python} (from smolInstruments.pythonPath)`;
    case 'python-extension':
      return `${candidate.python} (the Python extension's active environment)`;
    default:
      return candidate.python;
  }
}

function versionText(version: number[] | undefined): string {
  return version && version.length >= 2 ? version.slice(0, 3).join('.') : 'unknown';
}

function versionOk(version: number[] | undefined): boolean {
  if (!version || version.length < 2) {
    return false;
  }
  const [major, minor] = version;
  return major > MIN_VERSION[0] || (major === MIN_VERSION[0] && minor >= MIN_VERSION[1]);
}

/** What is wrong with a candidate, as one sentence that says how to fix it; undefined when fine. */
export function problemWith(candidate: Candidate, result: ProbeResult): string | undefined {
  const who = describe(candidate);
  if (result.spawnError) {
    return (
      `Cannot run Python ${who}: ${result.spawnError}. ` +
      'Set smolInstruments.pythonPath to a Python 3.10+ that has smol-instruments installed. ' +
      SETUP_HINT
    );
  }
  if (!versionOk(result.version)) {
    return (
      `${who} is Python ${versionText(result.version)}; smol-instruments needs Python ` +
      `${MIN_VERSION.join('.')} or newer. Set smolInstruments.pythonPath to a newer Python. ${SETUP_HINT}`
    );
  }
  if (result.daemon === undefined) {
    const error = result.error ?? 'ModuleNotFoundError';
    if (/No module named '?smol_instruments'?/.test(error) || error.startsWith('ModuleNotFoundError')) {
      return `smol-instruments is not installed for ${who} (Python ${versionText(result.version)}). ${SETUP_HINT}`;
    }
    return `smol-instruments is installed for ${who} but does not import (${error}). Reinstall it: ${SETUP_HINT}`;
  }
  return undefined;
}

/** Probes the candidates in order and answers the first that can run the daemon. */
export async function discoverPython(list: Candidate[], probe: Probe): Promise<Discovery> {
  const tried: Array<Candidate & { problem: string }> = [];
  for (const candidate of list) {
    let result: ProbeResult;
    try {
      result = await probe(candidate.python);
    } catch (error) {
      result = { spawnError: error instanceof Error ? error.message : String(error) };
    }
    const problem = problemWith(candidate, result);
    if (problem === undefined) {
      return {
        ok: true,
        python: candidate.python,
        source: candidate.source,
        version: versionText(result.version),
        daemonVersion: result.daemon ?? 'unknown',
      };
    }
    tried.push({ ...candidate, problem });
  }
  // Tell the most useful story: an interpreter that runs but lacks the package beats one that is missing.
  const best = tried.find((t) => t.problem.startsWith('smol-instruments')) ?? tried[0];
  const others = tried.filter((t) => t !== best).map((t) => `${t.python}: ${t.problem.split('.')[0]}`);
  const message = best ? best.problem + (others.length ? ` (Also tried ${others.join('; ')}.)` : '') : `No Python found. ${SETUP_HINT}`;
  return { ok: false, message, tried };
}
