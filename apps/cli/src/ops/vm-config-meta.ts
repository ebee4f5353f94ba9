import { domainKeys, pair, readKey, tagKeys, type WritePair, type ZkClient } from '@pvc/zk';
import { refused, usage } from '../errors.js';
import type { VmRef } from '../lookup.js';
import { parseLimitOption, parseMethodOption, parsePositiveInt, parseSelectorOption, parseTagName } from './vm-config-guards.js';

/** Options of `pvc vm meta`, as given on the command line. */
export interface MetaOptions {
  nodeLimit?: string;
  nodeSelector?: string;
  autostart?: boolean;
  migrationMethod?: string;
  migrationMaxDowntime?: string;
  profile?: string;
}

/** One changed setting: the key and the encoded value written. */
export interface MetaChange {
  key: string;
  value: string;
}

/**
 * `vm meta`: validates every given option (usage error, nothing written, when one is bad or none
 * is given) and writes them in one transaction. `--node-limit ''` clears the limit; `--profile ''`
 * writes `None`. Values are encoded as the original stores them (§1.3).
 */
export async function setMeta(zk: ZkClient, ref: VmRef, o: MetaOptions): Promise<MetaChange[]> {
  const d = domainKeys(ref.uuid);
  const pairs: WritePair[] = [];
  if (o.nodeLimit !== undefined) pairs.push(pair(d.nodeLimit, await parseLimitOption(zk, o.nodeLimit)));
  if (o.nodeSelector !== undefined) pairs.push(pair(d.nodeSelector, parseSelectorOption(o.nodeSelector)));
  if (o.autostart !== undefined) pairs.push(pair(d.nodeAutostart, o.autostart));
  if (o.migrationMethod !== undefined) pairs.push(pair(d.migrationMethod, parseMethodOption(o.migrationMethod)));
  if (o.migrationMaxDowntime !== undefined) {
    pairs.push(pair(d.migrationMaxDowntime, parsePositiveInt(o.migrationMaxDowntime, '--migration-max-downtime')));
  }
  if (o.profile !== undefined) pairs.push(pair(d.profile, o.profile === '' ? null : o.profile));
  if (pairs.length === 0) {
    throw usage('vm meta: give at least one of --node-limit, --node-selector, --autostart/--no-autostart, --migration-method, --migration-max-downtime, --profile');
  }
  await zk.write(pairs);
  return pairs.map(([key, value]) => ({ key: key.slice(d.root.path.length + 1), value }));
}

/**
 * `vm tag add`: creates or updates `tags/<tag>` (= the name), `type` = `user` and `protected` =
 * `True`/`False` in one transaction. Returns whether the tag was new.
 */
export async function addTag(zk: ZkClient, ref: VmRef, rawTag: string, isProtected: boolean): Promise<'added' | 'updated'> {
  const tag = parseTagName(rawTag);
  const tags = domainKeys(ref.uuid).tags;
  const t = tagKeys(ref.uuid, tag);
  const existed = (await zk.exists(t.root.path)) !== undefined;
  const pairs: WritePair[] = [
    ...((await zk.exists(tags.path)) === undefined ? [pair(tags, '')] : []),
    pair(t.root, tag),
    pair(t.type, 'user'),
    pair(t.protected, isProtected),
  ];
  await zk.write(pairs);
  return existed ? 'updated' : 'added';
}

/**
 * `vm tag remove`: deletes `tags/<tag>` with its keys. A protected tag is refused unless `force`
 * (our choice: the original's flag only marks the tag for its automation; here "protected" also
 * guards it against a casual remove). An absent tag is refused (exit 1).
 */
export async function removeTag(zk: ZkClient, ref: VmRef, rawTag: string, force: boolean): Promise<void> {
  const tag = parseTagName(rawTag);
  const t = tagKeys(ref.uuid, tag);
  if ((await zk.exists(t.root.path)) === undefined) throw refused(`VM ${ref.name} has no tag "${tag}"`);
  if (!force && (await readKey(zk, t.protected))) {
    throw refused(`tag "${tag}" of VM ${ref.name} is protected: add --force to remove it`);
  }
  await zk.delete(t.root.path);
}
