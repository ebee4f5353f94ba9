import { PvcError } from '@pvc/runtime';

/** Any failure of the cluster harness; `code` says which step failed. */
export class ClusterError extends PvcError {
  constructor(code: string, message: string, cause?: unknown) {
    super(code, message, { cause, retryable: false });
  }
}

/** The machine lacks something the harness needs; `missing` lists each item in words. */
export class PrerequisiteError extends ClusterError {
  readonly missing: readonly string[];

  constructor(missing: readonly string[]) {
    const packages = 'zookeeper libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils ' +
      'linux-image-cloud-amd64 busybox-static cpio openipmi ipmitool iproute2 util-linux';
    super(
      'CLUSTER_PREREQUISITES',
      `cannot create a test cluster, missing prerequisites:\n${missing.map((m) => `  - ${m}`).join('\n')}\n` +
        `(run as root; Debian packages: apt-get install -y ${packages})`,
    );
    this.missing = missing;
  }
}

/** A command was sent to a host that is powered off. */
export class HostPoweredOffError extends ClusterError {
  constructor(host: string, what: string) {
    super('HOST_POWERED_OFF', `host ${host} is powered off: cannot run ${what}`);
  }
}
