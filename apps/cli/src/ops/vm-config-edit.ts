import { domainKeys, pair, type WritePair, type ZkClient } from '@pvc/zk';
import { refused, usage } from '../errors.js';
import type { VmRef } from '../lookup.js';
import { requireKey } from '../lookup.js';
import { cpuTopology, parseDomainXml, serializeDomain, withMemoryMiB, withUuid, withVcpus, type DomainXml } from './domain-xml.js';
import { guardOnNode, guardUnique } from './vm-config-guards.js';

/** A VM's definition as stored: its state, node and parsed XML. */
export interface VmConfigNow {
  ref: VmRef;
  state: string;
  node: string;
  xml: DomainXml;
}

/** Reads a VM's state, node and XML; a stored XML that does not parse is bad data (exit 1). */
export async function readVmConfig(zk: ZkClient, ref: VmRef): Promise<VmConfigNow> {
  const d = domainKeys(ref.uuid);
  const [state, node, text] = await Promise.all([requireKey(zk, d.state), requireKey(zk, d.node), requireKey(zk, d.xml)]);
  let xml: DomainXml;
  try {
    // The stored XML is edited and written back, so it goes through the full parser (not the
    // size-only domainXmlFacts): an edit must keep every other part of the document.
    xml = parseDomainXml(text, d.xml.path);
  } catch (err) {
    throw refused(`bad data in Zookeeper: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { ref, state: state ?? '', node, xml };
}

/** What an XML change did. */
export interface XmlChange {
  /** The VM after the change (its new name when renamed). */
  ref: VmRef;
  state: string;
  node: string;
  /** The old name when the XML renamed the VM. */
  renamedFrom?: string;
  /** The written XML, parsed. */
  xml: DomainXml;
}

/**
 * `vm modify`: the new XML is checked like a definition; its `<uuid>` must be absent (the VM's is
 * inserted) or the VM's; a new `<name>` renames the VM when no other VM has it; the memory and
 * vCPU guards apply against the VM's node. Writes name (when changed), xml and the recomputed
 * rbdlist in one transaction.
 */
export async function modifyVm(zk: ZkClient, ref: VmRef, text: string, source: string): Promise<XmlChange> {
  let dx = parseDomainXml(text, source);
  if (dx.uuid !== undefined && dx.uuid !== ref.uuid.toLowerCase()) {
    throw usage(`${source}: <uuid> ${dx.uuid} is not VM ${ref.name}'s UUID ${ref.uuid} (leave it out or keep it)`);
  }
  if (dx.uuid === undefined) dx = withUuid(dx, ref.uuid);
  const now = await readVmConfig(zk, ref);
  if (dx.name !== ref.name) await guardUnique(zk, dx.name, undefined, ref.uuid);
  await guardOnNode(zk, ref.name, now.node, dx.memoryMiB, dx.vcpus);
  const d = domainKeys(ref.uuid);
  const pairs: WritePair[] = [
    ...(dx.name !== ref.name ? [pair(d.root, dx.name)] : []),
    pair(d.xml, serializeDomain(dx)),
    pair(d.rbdList, [...dx.rbdVolumes]),
  ];
  await zk.write(pairs);
  return {
    ref: { uuid: ref.uuid, name: dx.name }, state: now.state, node: now.node, xml: dx,
    ...(dx.name !== ref.name ? { renamedFrom: ref.name } : {}),
  };
}

/**
 * `vm vcpu set`: sets `<vcpu>` in the stored XML after the guard against the VM's node. A
 * `<cpu><topology>` that would no longer multiply out to the count is refused (exit 2): the
 * topology is the administrator's choice, edit it with `vm modify`.
 */
export async function setVcpus(zk: ZkClient, ref: VmRef, vcpus: number): Promise<XmlChange> {
  const now = await readVmConfig(zk, ref);
  const topo = cpuTopology(now.xml);
  if (topo !== undefined && topo.sockets * topo.cores * topo.threads !== vcpus) {
    throw usage(`VM ${ref.name}'s <cpu><topology> (${topo.sockets} sockets × ${topo.cores} cores × ${topo.threads} threads) does not give ${vcpus} vCPUs: change it with "pvc vm modify"`);
  }
  await guardOnNode(zk, ref.name, now.node, now.xml.memoryMiB, vcpus);
  const dx = withVcpus(now.xml, vcpus);
  await zk.write([pair(domainKeys(ref.uuid).xml, serializeDomain(dx))]);
  return { ref, state: now.state, node: now.node, xml: dx };
}

/** `vm memory set`: sets `<memory>` (and `<currentMemory>`) in MiB after the guard against the VM's node. */
export async function setMemory(zk: ZkClient, ref: VmRef, mib: number): Promise<XmlChange> {
  const now = await readVmConfig(zk, ref);
  await guardOnNode(zk, ref.name, now.node, mib, now.xml.vcpus);
  const dx = withMemoryMiB(now.xml, mib);
  await zk.write([pair(domainKeys(ref.uuid).xml, serializeDomain(dx))]);
  return { ref, state: now.state, node: now.node, xml: dx };
}
