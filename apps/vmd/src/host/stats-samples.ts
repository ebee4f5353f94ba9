/**
 * Samples for the stats specs: a PVC VM's live XML and the `virsh domstats --raw …` output for
 * it and for a second guest without a balloon driver, in the layout libvirt 9 / QEMU 7 print
 * (key names and order as libvirt's domstats documentation gives them; figures made up, not
 * captured: no libvirtd runs where these specs run).
 */

/** A PVC VM's live XML (`virsh dumpxml`): RBD disk, file disk, empty CD-ROM, two bridges, one macvtap. */
export const LIVE_XML = `<domain type='kvm' id='7'>
  <name>testvm</name>
  <uuid>aaaaaaaa-0000-0000-0000-000000000001</uuid>
  <memory unit='KiB'>4194304</memory>
  <vcpu placement='static'>4</vcpu>
  <devices>
    <emulator>/usr/bin/kvm</emulator>
    <disk type='network' device='disk'>
      <driver name='qemu' discard='unmap'/>
      <auth username='libvirt'>
        <secret type='ceph' uuid='c3a9b6f4-0000-4000-8000-000000000001'/>
      </auth>
      <source protocol='rbd' name='vms/testvm_disk0' index='3'>
        <host name='hv1' port='6789'/>
        <host name='hv2' port='6789'/>
      </source>
      <target dev='sda' bus='scsi'/>
      <alias name='scsi0-0-0-0'/>
      <address type='drive' controller='0' bus='0' target='0' unit='0'/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='/var/lib/libvirt/images/scratch.qcow2' index='2'/>
      <target dev='sdc' bus='scsi'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <target dev='sdb' bus='sata'/>
      <readonly/>
    </disk>
    <controller type='scsi' index='0' model='virtio-scsi'/>
    <interface type='bridge'>
      <mac address='52:54:00:12:34:56'/>
      <source bridge='vmbr100'/>
      <target dev='vnet0'/>
      <model type='virtio'/>
      <alias name='net0'/>
    </interface>
    <interface type='bridge'>
      <mac address='52:54:00:12:34:57'/>
      <source bridge='vmbr200'/>
      <target dev='vnet1'/>
      <model type='virtio'/>
    </interface>
    <interface type='direct'>
      <mac address='52:54:00:12:34:58'/>
      <source dev='ens4f0' mode='bridge'/>
      <target dev='macvtap0'/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'>
      <source path='/dev/pts/3'/>
      <log file='/var/log/libvirt/testvm.log' append='off'/>
      <target type='isa-serial' port='0'/>
    </serial>
  </devices>
</domain>
`;


/** `virsh domstats --raw --nowait --list-running --state --cpu-total --balloon --vcpu --interface --block`. */
export const DOMSTATS_OUTPUT = `Domain: 'testvm'
  state.state=1
  state.reason=1
  cpu.time=2451183626000
  cpu.user=1847250000000
  cpu.system=412330000000
  cpu.cache.monitor.count=0
  cpu.haltpoll.success.time=48213551208
  cpu.haltpoll.fail.time=9877120352
  balloon.current=4194304
  balloon.maximum=4194304
  balloon.swap_in=0
  balloon.swap_out=0
  balloon.major_fault=1203
  balloon.minor_fault=98321456
  balloon.unused=2817648
  balloon.available=4028208
  balloon.usable=3402512
  balloon.last-update=1712345671
  balloon.disk_caches=701244
  balloon.hugetlb_pgalloc=0
  balloon.hugetlb_pgfail=0
  balloon.rss=2287364
  vcpu.current=4
  vcpu.maximum=4
  vcpu.0.state=1
  vcpu.0.time=590120000000
  vcpu.0.wait=0
  vcpu.0.delay=1851209321
  vcpu.1.state=1
  vcpu.1.time=601870000000
  vcpu.1.wait=0
  vcpu.1.delay=1799331078
  vcpu.2.state=1
  vcpu.2.time=577330000000
  vcpu.2.wait=0
  vcpu.2.delay=1901122456
  vcpu.3.state=1
  vcpu.3.time=583910000000
  vcpu.3.wait=0
  vcpu.3.delay=1822874001
  net.count=3
  net.0.name=vnet0
  net.0.rx.bytes=81725316
  net.0.rx.pkts=612004
  net.0.rx.errs=0
  net.0.rx.drop=12
  net.0.tx.bytes=14227734
  net.0.tx.pkts=99321
  net.0.tx.errs=0
  net.0.tx.drop=0
  net.1.name=vnet1
  net.1.rx.bytes=5512
  net.1.rx.pkts=61
  net.1.rx.errs=0
  net.1.rx.drop=0
  net.1.tx.bytes=2048
  net.1.tx.pkts=18
  net.1.tx.errs=1
  net.1.tx.drop=2
  net.2.name=macvtap0
  net.2.rx.bytes=1000
  net.2.rx.pkts=10
  net.2.rx.errs=0
  net.2.rx.drop=0
  net.2.tx.bytes=2000
  net.2.tx.pkts=20
  net.2.tx.errs=0
  net.2.tx.drop=0
  block.count=3
  block.0.name=sda
  block.0.rd.reqs=53817
  block.0.rd.bytes=1489437184
  block.0.rd.times=48716122339
  block.0.wr.reqs=120877
  block.0.wr.bytes=2987651072
  block.0.wr.times=612003918223
  block.0.fl.reqs=28771
  block.0.fl.times=20122771033
  block.0.allocation=0
  block.0.capacity=21474836480
  block.0.physical=21474836480
  block.1.name=sdb
  block.1.rd.reqs=0
  block.1.rd.bytes=0
  block.1.rd.times=0
  block.1.wr.reqs=0
  block.1.wr.bytes=0
  block.1.wr.times=0
  block.1.fl.reqs=0
  block.1.fl.times=0
  block.2.name=sdc
  block.2.path=/var/lib/libvirt/images/scratch.qcow2
  block.2.backingIndex=2
  block.2.rd.reqs=311
  block.2.rd.bytes=5361664
  block.2.rd.times=201345671
  block.2.wr.reqs=77
  block.2.wr.bytes=1048576
  block.2.wr.times=99120334
  block.2.fl.reqs=9
  block.2.fl.times=1203345
  block.2.allocation=1114112
  block.2.capacity=1073741824
  block.2.physical=1114112

Domain: 'plain guest'
  state.state=1
  state.reason=1
  cpu.time=40213000000
  cpu.user=35010000000
  cpu.system=4100000000
  balloon.current=131072
  balloon.maximum=131072
  balloon.rss=98304
  vcpu.current=1
  vcpu.maximum=2
  vcpu.0.state=1
  vcpu.0.time=38120000000
  vcpu.0.wait=0
  net.count=0
  block.count=0

`;
