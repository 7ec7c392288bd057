// The command table of `furnish`: a new command is one more entry here.
import { admitCommand } from './admit-command.ts';
import { billingReportCommand } from './billing-command.ts';
import type { Command } from './command.ts';
import { installCommand, uninstallCommand } from './install-command.ts';
import { renderCommand } from './render-command.ts';
import { validateCommand } from './validate-command.ts';
import { webhooksCommand } from './webhooks-command.ts';

export const COMMANDS: readonly Command[] = [renderCommand, validateCommand, admitCommand, webhooksCommand, installCommand, uninstallCommand, billingReportCommand];
