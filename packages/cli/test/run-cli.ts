/**
 * Runs the real `hopper` binary (bin/hopper.js, built) as a child process, as an operator would,
 * and returns its exit code and output.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/hopper.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `hopper ...args` against `url` and `prefix`; never throws on a non-zero exit. */
export function hopper(url: string, prefix: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, '--prefix', prefix], { env: { ...process.env, REDIS_URL: url } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `hopper ...args` against `url` with `env` added to the environment and no `--prefix`; never throws on a non-zero exit. */
export function hopperWithEnv(url: string, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, REDIS_URL: url, ...env } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Parses the `--json` output of a successful run (fails with its stderr otherwise). */
export function json<T>(result: CliResult): T {
  if (result.code !== 0) throw new Error(`hopper exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/**
 * Runs `hopper ...args` in a pseudo-terminal (util-linux `script`), as an operator's terminal
 * would: stdout is a TTY, so live commands redraw in place.
 */
export function hopperInTerminal(url: string, prefix: string, ...args: string[]): Promise<CliResult> {
  const command = [process.execPath, BIN, ...args, '--prefix', prefix].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve) => {
    execFile('script', ['-qec', command, '/dev/null'], { env: { ...process.env, REDIS_URL: url } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
