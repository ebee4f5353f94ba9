import { readFile } from 'node:fs/promises';
import { realClock, type Clock } from '@pvc/runtime';

/** A place output goes to (process.stdout, or a buffer in tests). */
export interface TextSink {
  write(text: string): unknown;
  /** True when a terminal reads it: tables get colour and `--wait` redraws its progress line. */
  readonly isTTY?: boolean;
}

/**
 * Everything the CLI touches outside ZK, injected so that tests run `runCli` in-process:
 * output streams, the environment, the clock, the file reader and an abort signal (Ctrl-C).
 */
export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  env: Readonly<Record<string, string | undefined>>;
  clock: Clock;
  readFile(path: string): Promise<string>;
  signal?: AbortSignal;
}

/** The process's own I/O. */
export function processIo(signal?: AbortSignal): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    clock: realClock,
    readFile: (p) => readFile(p, 'utf8'),
    ...(signal ? { signal } : {}),
  };
}
