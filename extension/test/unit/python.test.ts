import { describe, expect, it } from 'vitest';
import {
  candidates,
  discoverPython,
  expandPath,
  parseProbeOutput,
  PROBE_SCRIPT,
  problemWith,
  SETUP_HINT,
  type ProbeResult,
} from '../../src/client/python';

const good: ProbeResult = { version: [3, 11, 7], daemon: '0.1.0' };
const noDaemon: ProbeResult = { version: [3, 12, 1], error: "ModuleNotFoundError: No module named 'smol_instruments'" };

function probeFrom(results: Record<string, ProbeResult | Error>) {
  const calls: string[] = [];
  const probe = async (python: string) => {
    calls.push(python);
    const result = results[python];
    if (result instanceof Error) {
      throw result;
    }
    return result ?? { spawnError: 'not found' };
  };
  return { probe, calls };
}

describe('python discovery order', () => {
  it('uses the setting alone when it is set, never second-guessing it', () => {
    expect(candidates('/opt/venv/bin/python', '/usr/bin/python3.12', 'python3')).toEqual([{ python: '/opt/venv/bin/python', source: 'setting' }]);
  });

  it('then the Python extension environment, then python3', () => {
    expect(candidates('', '/home/u/.venv/bin/python', 'python3')).toEqual([
      { python: '/home/u/.venv/bin/python', source: 'python-extension' },
      { python: 'python3', source: 'default' },
    ]);
    expect(candidates(undefined, undefined, 'python3')).toEqual([{ python: 'python3', source: 'default' }]);
  });

  it('does not probe the same interpreter twice', () => {
    expect(candidates('  ', 'python3', 'python3')).toEqual([{ python: 'python3', source: 'python-extension' }]);
  });

  it('picks the first candidate that has the daemon', async () => {
    const { probe, calls } = probeFrom({ '/env/python': noDaemon, python3: good });
    const found = await discoverPython(candidates('', '/env/python', 'python3'), probe);
    expect(found).toMatchObject({ ok: true, python: 'python3', source: 'default', version: '3.11.7', daemonVersion: '0.1.0' });
    expect(calls).toEqual(['/env/python', 'python3']);
  });

  it('stops at the first good one', async () => {
    const { probe, calls } = probeFrom({ '/env/python': good, python3: good });
    const found = await discoverPython(candidates('', '/env/python', 'python3'), probe);
    expect(found).toMatchObject({ ok: true, python: '/env/python', source: 'python-extension' });
    expect(calls).toEqual(['/env/python']);
  });
});

describe('what the user is told', () => {
  it('says exactly how to install the daemon when it is missing', async () => {
    const { probe } = probeFrom({ python3: noDaemon });
    const found = await discoverPython(candidates('', undefined, 'python3'), probe);
    expect(found.ok).toBe(false);
    if (!found.ok) {
      expect(found.message).toContain('smol-instruments is not installed for python3 (Python 3.12.1)');
      expect(found.message).toContain('Run `bash .ci/setup` in the smol-instruments checkout, or `pip install smol-instruments`');
      expect(found.message).toContain('then set smolInstruments.pythonPath to that Python');
    }
  });

  it('names the setting when the configured Python cannot run', () => {
    const problem = problemWith({ python: '/nope/python', source: 'setting' }, { spawnError: 'not found' });
    expect(problem).toMatch(/^Cannot run Python \/nope\/python \(from smolInstruments\.pythonPath\): not found\./);
    expect(problem).toContain(SETUP_HINT);
  });

  it('refuses Python older than 3.10 and says which version it found', () => {
    const problem = problemWith({ python: 'python3', source: 'default' }, { version: [3, 8, 10], error: 'x' });
    expect(problem).toContain('python3 is Python 3.8.10; smol-instruments needs Python 3.10 or newer');
  });

  it('accepts 3.10 and newer majors', () => {
    expect(problemWith({ python: 'p', source: 'default' }, { version: [3, 10, 0], daemon: '1' })).toBeUndefined();
    expect(problemWith({ python: 'p', source: 'default' }, { version: [4, 0, 0], daemon: '1' })).toBeUndefined();
  });

  it('tells a broken install from a missing one', () => {
    const problem = problemWith({ python: 'p', source: 'default' }, { version: [3, 11, 0], error: "ImportError: cannot import name 'x'" });
    expect(problem).toContain('is installed for p but does not import (ImportError');
  });

  it('prefers the story of an interpreter that runs but lacks the package', async () => {
    const { probe } = probeFrom({ '/env/python': new Error('spawn EACCES'), python3: noDaemon });
    const found = await discoverPython(candidates('', '/env/python', 'python3'), probe);
    expect(found.ok).toBe(false);
    if (!found.ok) {
      expect(found.message.startsWith('smol-instruments is not installed for python3')).toBe(true);
      expect(found.message).toContain('Also tried /env/python');
      expect(found.tried.map((t) => t.source)).toEqual(['python-extension', 'default']);
    }
  });
});

describe('the probe', () => {
  it('is one python -c script that imports smol_instruments', () => {
    expect(PROBE_SCRIPT).toContain('import smol_instruments');
    expect(PROBE_SCRIPT).toContain('sys.version_info');
  });

  it('reads the last JSON line and ignores noise before it', () => {
    expect(parseProbeOutput('warning: something\n{"version": [3, 11, 2], "daemon": "0.1.0"}\n')).toEqual({ version: [3, 11, 2], daemon: '0.1.0' });
  });

  it('turns garbage into a spawn error', () => {
    expect(parseProbeOutput('Python 2.7.18\n').spawnError).toContain('unexpected output');
    expect(parseProbeOutput('').spawnError).toContain('(none)');
  });
});

describe('expandPath', () => {
  it('expands ~, ${userHome} and ${workspaceFolder}', () => {
    expect(expandPath('~/venv/bin/python', '/ws', '/home/u')).toBe('/home/u/venv/bin/python');
    expect(expandPath('${userHome}/x', '/ws', '/home/u')).toBe('/home/u/x');
    expect(expandPath('${workspaceFolder}/.venv/bin/python', '/ws', '/home/u')).toBe('/ws/.venv/bin/python');
    expect(expandPath(' python3 ', undefined, '/home/u')).toBe('python3');
  });
});
