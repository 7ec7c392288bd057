// `--vars FILE`, shared by the commands that render infra/ for one cluster (`furnish webhooks`,
// `furnish install`): one cluster's entry of Terraform's output install_vars, the one source of the
// values the GCP side decides. A flag that says otherwise is refused, never a silent override.
import { readFileSync } from 'node:fs';
import { agreedValue, defaultTopicVars, parseInstallVars, type Comparison, type InstallVars } from '../install/vars.ts';
import { CliError, type CliIo, type OptionSpec, type OptionValues, stringOption, UsageError } from './command.ts';

/** The --vars option; `gives` says what the command takes from the file. */
export function varsOption(gives: string): OptionSpec {
  return { type: 'string', value: 'file', description: `the cluster's entry of \`terraform output -json install_vars\` (JSON; - reads stdin; a flag that contradicts it is refused): ${gives}` };
}

/** What --vars gives: the file's variables (the default topics without one) and the file's name for errors. */
export interface VarsFile {
  vars: InstallVars;
  where: string;
}

export function readVarsOption(values: OptionValues, io: CliIo): VarsFile {
  const file = stringOption(values, 'vars');
  if (file === undefined) return { vars: defaultTopicVars(), where: '' };
  let text: string;
  try {
    text = file === '-' ? io.readStdin() : readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`--vars ${file}: ${(e as Error).message}`);
  }
  try {
    return { vars: parseInstallVars(text, `--vars ${file}`), where: file };
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

/**
 * The options with each of `variables` (option → install variable) agreed between the flag and the
 * file: the flag fills what the file lacks; where both say something they must agree.
 */
export function agreedOptions(values: OptionValues, file: VarsFile, variables: Readonly<Record<string, string>>): OptionValues {
  const agreed: OptionValues = { ...values };
  for (const [option, variable] of Object.entries(variables)) agreed[option] = agreedFlag(option, stringOption(values, option), variable, file);
  return agreed;
}

/** One flag agreed with the file's variable (agreedValue, compared `as` it says), a contradiction refused as a usage error. */
export function agreedFlag(option: string, flag: string | undefined, variable: string, { vars, where }: VarsFile, as?: Comparison): string | undefined {
  try {
    return agreedValue(option, flag, variable, vars, where, as);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
