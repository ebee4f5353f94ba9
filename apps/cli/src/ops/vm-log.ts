import { domainKeys, readKey, watchKey } from '@pvc/zk';
import type { CliContext } from '../context.js';
import type { VmRef } from '../lookup.js';
import type { Format } from '../output.js';

/** Splits `consolelog` into lines ("" → none; a final newline ends the last line). */
export function logLines(text: string): string[] {
  if (text === '') return [];
  return text.replace(/\n$/, '').split('\n');
}

/**
 * The lines of `now` that `before` did not have. `consolelog` is a sliding window (the last N
 * lines of the console), so `now` = a tail of `before` + new lines: the longest tail of `before`
 * that starts `now` is skipped. When none does (the log was replaced), every line is new.
 */
export function newLines(before: readonly string[], now: readonly string[]): string[] {
  for (let drop = 0; drop < before.length; drop++) {
    const tail = before.length - drop;
    if (tail > now.length) continue;
    let same = true;
    for (let i = 0; i < tail && same; i++) same = before[drop + i] === now[i];
    if (same) return now.slice(tail);
  }
  return [...now];
}

/**
 * `pvc vm log`: the last `lines` lines of the VM's console log (`consolelog`, kept by vmd's
 * console watcher); with `follow`, then every new line as the key changes, until the command's
 * abort signal (Ctrl-C). JSON: `{name, uuid, lines}` (no follow).
 */
export async function showVmLog(ctx: CliContext, ref: VmRef, lines: number, follow: boolean, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const key = domainKeys(ref.uuid).consoleLog;
  let shown = logLines(await readKey(zk, key));
  const tail = shown.slice(Math.max(0, shown.length - lines));
  if (format === 'json') return ctx.output.json({ name: ref.name, uuid: ref.uuid, lines: tail });
  for (const l of tail) ctx.output.line(l);
  if (!follow) return;
  const signal = ctx.io.signal;
  if (signal?.aborted) return;
  await new Promise<void>((resolve) => {
    const sub: { stop?: () => void } = {};
    let done = false;
    const finish = (): void => {
      done = true;
      sub.stop?.();
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    signal?.addEventListener('abort', finish, { once: true });
    sub.stop = watchKey(zk, key, (text) => {
      if (done) return;
      if (text === undefined) {
        ctx.output.note(`VM "${ref.name}" was removed`);
        finish();
        return;
      }
      const now = logLines(text);
      for (const l of newLines(shown, now)) ctx.output.line(l);
      shown = now;
    });
    if (done) sub.stop();
  });
}
