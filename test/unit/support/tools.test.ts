// The gate of tests that need an outside tool: a missing tool is a visible skip on a laptop and a
// failure under CI=true, never a test that returns early and counts as passed.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { describeWithTool, findTool, gate, isCI, requireAll, toolGate, toolVerdict } from '../../support/tools.ts';

const ABSENT = 'furnish-no-such-tool-7f3a';
const savedCI = process.env.CI;
let stderr: string[];

beforeEach(() => {
  stderr = [];
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => { stderr.push(String(chunk)); return true; });
});
afterEach(() => {
  jest.restoreAllMocks();
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
});

describe('toolVerdict', () => {
  it('runs with the tool, skips without it on a laptop, fails without it under CI', () => {
    expect([toolVerdict(true, false), toolVerdict(true, true), toolVerdict(false, false), toolVerdict(false, true)]).toEqual(['run', 'run', 'skip', 'fail']);
  });
});

describe('isCI', () => {
  it('reads CI=true and CI=1, nothing else', () => {
    expect([isCI({ CI: 'true' }), isCI({ CI: '1' }), isCI({ CI: 'false' }), isCI({})]).toEqual([true, true, false, false]);
  });
});

describe('findTool', () => {
  it('finds a tool on PATH and says where, and reports an absent one as absent', () => {
    expect(findTool('sh', ['-c', 'true'])).toEqual({ available: true, path: expect.stringMatching(/\/sh$/) });
    expect(findTool(ABSENT)).toEqual({ available: false });
  });
});

describe('describeWithTool', () => {
  it('without the tool on a laptop: describe.skip, with a banner naming the tool and why', () => {
    delete process.env.CI;
    expect(describeWithTool(ABSENT, 'the suite drives it')).toBe(describe.skip);
    expect(stderr.join('')).toContain(`!! SKIPPED: ${ABSENT} is not installed: the suite drives it`);
  });

  it('without the tool under CI=true: throws, naming the tool', () => {
    process.env.CI = 'true';
    expect(() => describeWithTool(ABSENT, 'the suite drives it')).toThrow(`${ABSENT} is not installed: the suite drives it (CI=true: what a test needs must be there)`);
    expect(stderr).toEqual([]);
  });

  it('with the tool: the plain describe, silently, under CI or not', () => {
    for (const ci of ['true', 'false']) {
      process.env.CI = ci;
      expect(describeWithTool('sh', 'a shell', ['-c', 'true'])).toBe(describe);
    }
    expect(stderr).toEqual([]);
  });
});

describe('toolGate and gate', () => {
  it('with every tool: available, describe and it', () => {
    expect(toolGate([{ command: 'sh', why: 'a shell', versionArgs: ['-c', 'true'] }])).toEqual({ available: true, describe: describe, it: it });
  });

  it('one tool of two missing: not available, both skip, and only the missing one is named', () => {
    delete process.env.CI;
    expect(toolGate([{ command: 'sh', why: 'a shell', versionArgs: ['-c', 'true'] }, { command: ABSENT, why: 'needed too' }]))
      .toEqual({ available: false, describe: describe.skip, it: it.skip });
    expect(stderr.join('')).toContain(`${ABSENT} is not installed: needed too`);
    expect(stderr.join('')).not.toContain('sh is not installed');
  });

  it('a missing capability (not a tool): skip with its remedy on a laptop, fail under CI', () => {
    const missing = [{ message: 'no /proc here', remedy: 'Run these tests on Linux.' }];
    expect(gate(requireAll(missing, false)).it).toBe(it.skip);
    expect(stderr.join('')).toContain('!! SKIPPED: no /proc here\n!! Run these tests on Linux.');
    expect(() => requireAll(missing, true)).toThrow('no /proc here (CI=true');
    expect(requireAll([], true)).toBe(true);
  });
});
