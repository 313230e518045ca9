import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { internal } from '../errors.js';

/**
 * File types from the system's libmagic, the same text `file -b` prints. One long-lived
 * `file --no-buffer -f -` process answers every lookup, so a submission costs no process start.
 */
export class FileTypeDetector {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly waiting: Array<{ resolve: (type: string) => void; reject: (error: Error) => void }> = [];

  async detect(path: string): Promise<string> {
    if (/[\n\r]/.test(path)) throw internal('file paths with line breaks cannot be typed', { context: { path } });
    const child = this.process();
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      child.stdin.write(`${path}\n`);
    });
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }

  private process(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = spawn('file', ['--brief', '--no-buffer', '--no-pad', '--files-from', '-'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    createInterface({ input: child.stdout }).on('line', (line) => this.waiting.shift()?.resolve(line));
    const fail = (error: Error) => {
      if (this.child === child) this.child = undefined;
      for (const waiter of this.waiting.splice(0)) waiter.reject(internal(`libmagic lookup failed: ${error.message}`, { cause: error }));
    };
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`file exited with ${code}`)));
    child.stdin.on('error', fail);
    this.child = child;
    return child;
  }
}
