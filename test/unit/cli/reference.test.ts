// docs/reference/cli.md is generated from the CLI's help texts (`npm run cli:docs`): this fails
// while the two differ, so a changed flag or summary cannot leave the reference behind.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { CLI_REFERENCE, cliReference } from '../../../scripts/cli-reference.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';

describe('the CLI reference', () => {
  it('docs/reference/cli.md is what `npm run cli:docs` writes from the help texts', () => {
    expect(readFileSync(CLI_REFERENCE, 'utf8')).toBe(cliReference());
  });

  it('names every command and every option of each', () => {
    const reference = cliReference();
    for (const command of COMMANDS) {
      expect(reference).toContain(`## furnish ${command.name}\n`);
      for (const option of Object.keys(command.options)) expect(reference).toContain(`--${option}`);
    }
  });
});
