import { runCli } from './cli';

// `npx fairway …` (bin/fairway, built into dist/ by `npm run build:cli`): the operator CLI.
// stdout carries only the command's output (one JSON document with --json); everything else that
// writes to stdout (the handlers' Powertools logs and EMF metrics under `invoke`) goes to stderr.
const stdout = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

runCli(process.argv.slice(2), process.env, {
  out: (text) => stdout(`${text}\n`),
  err: (text) => console.error(text),
}).then(
  // A one-shot command: exit once its output is written, whatever connection or timer is left.
  (code) => exit(code),
  (error: unknown) => {
    console.error(error);
    exit(1);
  },
);

function exit(code: number) {
  stdout('', () => process.exit(code));
}
