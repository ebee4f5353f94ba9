// busybox udhcpc as a DHCP client in a network namespace (interface eth0), for the netd tests:
// a script that applies the address and records each event, one-shot and long-running clients.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes the udhcpc script: applies the address and appends `<event> <ip>` to `<dir>/<events>`. */
export function writeUdhcpcScript(dir: string): string {
  const path = join(dir, 'udhcpc.sh');
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      'case "$1" in',
      '  bound|renew) ip address flush dev "$interface"; ip address add "$ip/${mask:-24}" dev "$interface" ;;',
      '  deconfig) ip address flush dev "$interface" ;;',
      'esac',
      'echo "$1 ${ip:-}" >> "$UDHCPC_EVENTS"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return path;
}

/** The `<event> <ip>` lines the script wrote to `file` so far. */
export function udhcpcEvents(file: string): { event: string; ip: string }[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => l !== '').map((l) => {
    const [event = '', addr = ''] = l.split(' ');
    return { event, ip: addr };
  });
}

/** udhcpc in `ns` on eth0, in the foreground (`-f`), releasing on exit (`-R`). */
export function spawnUdhcpc(ns: string, script: string, events: string, extra: readonly string[] = []): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, 'busybox', 'udhcpc', '-i', 'eth0', '-f', '-R', '-s', script, '-t', '10', '-T', '1', '-A', '1', ...extra], {
    stdio: 'ignore',
    env: { ...process.env, UDHCPC_EVENTS: events },
  });
}

/** One-shot udhcpc (`-n -q`): the address it obtained, or undefined. */
export function udhcpcOnce(ns: string, script: string, events: string, extra: readonly string[] = []): string | undefined {
  const r = spawnSync('ip', ['netns', 'exec', ns, 'busybox', 'udhcpc', '-i', 'eth0', '-n', '-q', '-s', script, '-t', '10', '-T', '1', ...extra], {
    encoding: 'utf8',
    env: { ...process.env, UDHCPC_EVENTS: events },
    timeout: 30_000,
  });
  return /lease of (\S+) obtained/.exec(`${r.stdout}${r.stderr}`)?.[1];
}

