// Entry of the `furnish` CLI: bin/furnish.js imports this module, which runs at once. The
// commands are in commands.ts; everything else (help, flags, exit codes) in command.ts.
import { readFileSync } from 'node:fs';
import { runCli, type CliIo } from './command.ts';
import { COMMANDS } from './commands.ts';

const io: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  readStdin: () => readFileSync(0, 'utf8'),
};

// `furnish render | head` closes the pipe early: that is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// exitCode, not exit(): let stdout drain before the process ends.
process.exitCode = await runCli(COMMANDS, process.argv.slice(2), io);
