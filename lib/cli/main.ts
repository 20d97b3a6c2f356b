#!/usr/bin/env node
import { createInterface } from 'node:readline/promises';
import { runCli } from './run-cli';

const io = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
  async ask(question: string): Promise<string> {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
};

runCli(process.argv.slice(2), process.env, io).then(
  (code) => (process.exitCode = code),
  () => (process.exitCode = 1),
);
