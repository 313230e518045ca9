import { spawn } from 'node:child_process';

/** libmagic's description of bytes in memory (`file -b -`), or null when it cannot tell. */
export function magicOfBuffer(data: Buffer): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn('file', ['--brief', '-'], { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code === 0 && output.trim() ? output.trim() : null));
    // `file` may stop reading once it knows the type; the write error that follows is expected.
    child.stdin.on('error', () => undefined);
    child.stdin.end(data);
  });
}
