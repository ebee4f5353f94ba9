import { LIBVIRT_TCP_PORT, IPMI_PORT } from './plan.js';
import type { ClusterPlan, HostPlan } from './plan.js';
import { CHASSIS_CONTROL_SH } from './run.js';

/**
 * libvirtd.conf of one host: TCP without auth on every address of the host's own network namespace
 * (reached on the cluster address; libvirtd starts at power-on, before the node's bring-up may have
 * put that address on, so it cannot bind it), no TLS, a host_uuid of its own (libvirt refuses to
 * migrate between hosts with equal UUIDs, and every namespace sees the same SMBIOS UUID).
 */
export function libvirtdConf(host: HostPlan): string {
  return [
    '# Written by tests/cluster/harness for one simulated host.',
    'listen_tls = 0',
    'listen_tcp = 1',
    'listen_addr = "0.0.0.0"',
    `tcp_port = "${LIBVIRT_TCP_PORT}"`,
    'auth_tcp = "none"',
    'auth_unix_ro = "none"',
    'auth_unix_rw = "none"',
    'unix_sock_group = "root"',
    'unix_sock_rw_perms = "0770"',
    `host_uuid = "${host.uuid}"`,
    'log_outputs = "3:file:/var/log/libvirt/libvirtd.log"',
    'max_clients = 100',
    'keepalive_interval = 5',
    'keepalive_count = 5',
    '',
  ].join('\n');
}

/**
 * qemu.conf: guests run as root without security driver, cgroups or private /dev (all hosts share
 * one kernel; per-domain cgroups named qemu-<id>-<name> would collide between hosts). Migration
 * listens on the host's cluster address.
 */
export function qemuConf(host: HostPlan): string {
  return [
    '# Written by tests/cluster/harness for one simulated host.',
    'user = "root"',
    'group = "root"',
    'dynamic_ownership = 0',
    'remember_owner = 0',
    'security_driver = "none"',
    'cgroup_controllers = [ ]',
    'namespaces = [ ]',
    'stdio_handler = "logd"',
    `migration_address = "${host.ips.cluster}"`,
    `migration_host = "${host.ips.cluster}"`,
    '',
  ].join('\n');
}

/** virtlogd.conf: logs into the host's own /var/log/libvirt. */
export function virtlogdConf(): string {
  return ['# Written by tests/cluster/harness.', 'log_outputs = "3:file:/var/log/libvirt/virtlogd.log"', ''].join('\n');
}

/**
 * ipmi_sim LAN configuration: one BMC (MC 0x20) on the host's ipmi address, one admin user, and
 * the chassis_control program that powers the simulated host (see sh/chassis-control.sh).
 */
export function lanConf(plan: ClusterPlan, host: HostPlan): string {
  const auths = 'none md2 md5 straight';
  return [
    `# ipmi_sim LAN config of ${host.name}, written by tests/cluster/harness.`,
    `name "${host.netns}"`,
    'set_working_mc 0x20',
    '  startlan 1',
    `    addr ${host.ips.ipmi} ${IPMI_PORT}`,
    '    priv_limit admin',
    `    allowed_auths_callback ${auths}`,
    `    allowed_auths_user ${auths}`,
    `    allowed_auths_operator ${auths}`,
    `    allowed_auths_admin ${auths}`,
    `    guid ${host.uuid.replace(/-/g, '')}`,
    '  endlan',
    `  chassis_control "${CHASSIS_CONTROL_SH} ${host.dirs.root} 0x20"`,
    `  user 2 true "${plan.ipmi.user}" "${plan.ipmi.pass}" admin 10 ${auths}`,
    '',
  ].join('\n');
}

/** ipmi_sim emulation commands: a bare BMC with a SEL, nothing else. */
export function simEmu(): string {
  return [
    '# ipmi_sim emulation of a bare BMC, written by tests/cluster/harness.',
    'mc_setbmc 0x20',
    'mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02',
    'sel_enable 0x20 64 0x0a',
    'mc_enable 0x20',
    '',
  ].join('\n');
}

/** Shell-quotes one word for the generated service scripts. */
export function shq(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A service script as host-power.sh runs it inside the host: records its (namespace-local) pid,
 * then execs the daemon in the foreground so the host's PID 1 adopts and reaps it.
 */
export function serviceScript(
  host: HostPlan,
  name: string,
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): string {
  const exports = Object.entries(env).map(([k, v]) => `export ${k}=${shq(v)}`);
  return [
    '#!/bin/bash',
    `# Service "${name}" of ${host.name}; started by host-power.sh at every power-on.`,
    ...exports,
    `echo $$ >${shq(`${host.dirs.root}/run/svc/${name}.pid`)}`,
    `exec ${[command, ...args].map(shq).join(' ')}`,
    '',
  ].join('\n');
}
