import { createInterface } from 'node:readline/promises';
import type { CliIo } from '../io.ts';
import { CliError, usageError } from './errors.ts';

/**
 * Questions for `cns login` and confirmations. On a terminal: asked on stderr, the password
 * without echo. Otherwise answers are read as lines from stdin (one per question, in order), so
 * `printf 'me@x\npw\n' | cns login` works in scripts.
 */
export class Prompter {
  private piped: string[] | null = null;
  private readonly input: CliIo['stdin'];
  private readonly output: CliIo['stderr'];

  constructor(io: Pick<CliIo, 'stdin' | 'stderr'>) {
    this.input = io.stdin;
    this.output = io.stderr;
  }

  get interactive(): boolean {
    return Boolean(this.input.isTTY);
  }

  /** `missing` is the usage error when stdin has no answer (default: which question went unanswered). */
  async ask(question: string, missing?: string): Promise<string> {
    if (!this.interactive) return this.nextLine(question, missing);
    const rl = createInterface({ input: this.input, output: this.output, terminal: true });
    try {
      return (await rl.question(question)).trim();
    } finally {
      rl.close();
    }
  }

  async askHidden(question: string, missing?: string): Promise<string> {
    if (!this.interactive) return this.nextLine(question, missing);
    this.output.write(question);
    const input = this.input;
    input.setRawMode?.(true);
    input.setEncoding('utf8');
    input.resume();
    return new Promise((resolve, reject) => {
      let value = '';
      const finish = (err: Error | null) => {
        input.off('data', onData);
        input.setRawMode?.(false);
        input.pause();
        this.output.write('\n');
        if (err) reject(err);
        else resolve(value);
      };
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish(null);
          if (ch === '\u0003') return finish(new CliError('cancelled'));
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else value += ch;
        }
      };
      input.on('data', onData);
    });
  }

  /** Piped input is read whole on the first question: a pipe has no prompts to wait for. */
  private async nextLine(question: string, missing?: string): Promise<string> {
    if (this.piped === null) {
      let text = '';
      for await (const chunk of this.input) text += String(chunk);
      this.piped = text.split(/\r?\n/);
    }
    const line = this.piped.shift();
    if (line === undefined || line.trim() === '') throw usageError(missing ?? `no answer on stdin for "${question.replace(/:\s*$/, '')}"`);
    return line;
  }
}
