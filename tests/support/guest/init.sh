#!/bin/busybox sh
# /init of the tiny test guest (busybox initramfs; a disk and the network only when asked for).
# Prints "pvc-guest <name> tick <n>" to the console (console=ttyS0) once a second; <name> comes
# from the kernel command line "pvc.name=<name>" (the domain name). Changing this file changes the
# cache key of the built image.
#
# Networking is opt-in from the kernel command line (every line it prints starts "pvc-guest <name>"):
#   pvc.net=dhcp          insmod the virtio NIC modules of /lib/modules/pvc (in the order of its
#                         `order` file), lo and eth0 up ("net eth0 <mac>", or "net error <why>"),
#                         busybox udhcpc on eth0: "lease <ip> bound|renew router <gw> server <id>"
#                         on each ACK, "dhcp leasefail|nak|deconfig" otherwise
#   pvc.renew=<s>         with pvc.net: every <s> seconds (default 5) "renew-ask <n>", then SIGUSR1
#                         to udhcpc (a unicast renew to the server); a success prints a "lease … renew"
#   pvc.ping=<ip>[,<ip>]  with pvc.net: per target, once a second, "ping <ip> <seq> ok|fail"
#                         (busybox ping -c 1 -W 1; seq counts from 0 per target)
#   pvc.lookup=<host>/<server>[,<host>/<server>]
#                         with pvc.net, from the first lease on: per entry, every 2 s, busybox
#                         nslookup <host> <server> (5 s bound): "lookup <host>/<server> ok <ms> <ip>"
#                         (the first address answered) or "lookup <host>/<server> fail <ms> <why>"
#                         (no "@": the test domain XML allows only [A-Za-z0-9._,=:/-] on the cmdline)
#   pvc.meta=<s>          with pvc.net, from the first lease on: every <s> seconds busybox wget (5 s
#                         bound each; its -T option crashes Debian's busybox 1.35) of
#                         http://169.254.169.254/latest/meta-data/instance-id, then /latest/user-data:
#                         "meta instance-id ok <ms> <body>", "meta user-data ok <ms> <body, each line
#                         break as |>", or "meta <instance-id|user-data> fail <ms> <why>"
#   <ms> is the request's duration from /proc/uptime (10 ms resolution).
#
# A raw disk (no filesystem) is opt-in too; its steps run before the ticks start:
#   pvc.disk=<dev>        insmod the virtio disk modules (disk.order), wait for <dev> (e.g. /dev/vda),
#                         then print what its first 512 bytes hold: "marker boot <text>" when they
#                         start "PVCM:<text>\n", else "marker boot none" ("disk error <why>" on failure)
#   pvc.marker=write:<t>  with pvc.disk: after that line, write "PVCM:<t>\n" zero-padded to 512 bytes
#                         at offset 0, fsync and sync: "marker wrote <t>" (or "marker error <why>").
#                         Every boot prints the boot line first, so a guest booted again from the
#                         same XML shows what an earlier boot (on any host) left on the disk.
#   pvc.diskwrite=<s>     with pvc.disk: every <s> seconds write "PVCW:<name> <n>\n" (512 bytes) at
#                         offset 4096 and fsync: "disk write <n> ok|fail" (a writer that lost its
#                         disk, e.g. after Ceph blocklisted it, prints fail or stops printing)
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox --install -s
name=guest
net=
renew=5
pings=
lookups=
meta=
disk=
marker=
diskwrite=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    pvc.name=*) name="${arg#pvc.name=}" ;;
    pvc.net=*) net="${arg#pvc.net=}" ;;
    pvc.renew=*) renew="${arg#pvc.renew=}" ;;
    pvc.ping=*) pings="${arg#pvc.ping=}" ;;
    pvc.lookup=*) lookups="${arg#pvc.lookup=}" ;;
    pvc.meta=*) meta="${arg#pvc.meta=}" ;;
    pvc.disk=*) disk="${arg#pvc.disk=}" ;;
    pvc.marker=*) marker="${arg#pvc.marker=}" ;;
    pvc.diskwrite=*) diskwrite="${arg#pvc.diskwrite=}" ;;
  esac
done
hostname "$name"
echo "pvc-guest $name up"

say() { echo "pvc-guest $name $*"; }

# The udhcpc script: applies the lease (address only when it changed: a renew must not flush the
# address under running pings) and reports it on the console.
write_dhcp_script() {
  cat >/tmp/udhcpc.sh <<EOF
#!/bin/sh
say() { echo "pvc-guest $name \$*" >/dev/console; }
case "\$1" in
  deconfig) ip -4 address flush dev "\$interface"; say "dhcp deconfig" ;;
  bound|renew)
    ip -4 address show dev "\$interface" | grep -q " \$ip/" || { ip -4 address flush dev "\$interface"; ip address add "\$ip/\${mask:-24}" dev "\$interface"; }
    gw="\${router%% *}"
    [ -n "\$gw" ] && { ip route replace default via "\$gw" dev "\$interface" 2>/dev/null || ip route add default via "\$gw" dev "\$interface"; }
    : >/tmp/dhcp-bound
    say "lease \$ip \$1 router \${gw:-none} server \${serverid:-none}" ;;
  leasefail|nak) say "dhcp \$1 \${message:-}" ;;
esac
EOF
  chmod 755 /tmp/udhcpc.sh
}

# load_modules <net|disk>: insmod <kind>.order's modules not yet loaded; false (after saying why)
# when the image has none for that device.
load_modules() {
  dir=/lib/modules/pvc
  if [ -f "$dir/$1.unavailable" ]; then say "$1 error $(cat "$dir/$1.unavailable")"; return 1; fi
  while read -r ko; do
    [ -d "/sys/module/${ko%.ko}" ] && continue
    insmod "$dir/$ko" 2>/tmp/insmod.err || say "$1 insmod $ko failed: $(cat /tmp/insmod.err)"
  done <"$dir/$1.order"
}

net_up() {
  load_modules net || return
  i=0
  while [ ! -e /sys/class/net/eth0 ]; do
    i=$((i + 1))
    if [ $i -gt 100 ]; then say "net error no eth0 after 10 s"; return; fi
    sleep 0.1
  done
  ip link set lo up
  ip link set eth0 up
  say "net eth0 $(cat /sys/class/net/eth0/address)"
  write_dhcp_script
  udhcpc -i eth0 -f -s /tmp/udhcpc.sh -p /tmp/udhcpc.pid -t 3 -T 1 -A 1 -x "hostname:$name" &
  n=0
  while sleep "$renew"; do
    [ -f /tmp/dhcp-bound ] && [ -f /tmp/udhcpc.pid ] || continue
    say "renew-ask $n"
    kill -USR1 "$(cat /tmp/udhcpc.pid)" 2>/dev/null
    n=$((n + 1))
  done &
  for t in $(echo "$pings" | tr ',' ' '); do
    (
      seq=0
      while :; do
        if ping -c 1 -W 1 "$t" >/dev/null 2>&1; then r=ok; else r=fail; fi
        say "ping $t $seq $r"
        seq=$((seq + 1))
        [ $r = ok ] && sleep 1
      done
    ) &
  done
  after_lease
}

# uptime_ms: the guest's uptime in ms (/proc/uptime has centiseconds).
uptime_ms() { read -r u _ </proc/uptime; echo "${u%.*}${u#*.}0"; }

# oneline <file>: the file's text on one line (line breaks as |, no trailing |), at most 200 chars.
oneline() { tr '\n' '|' <"$1" | sed 's/|$//' | cut -c 1-200; }

# lookup_loop <host>/<server> <n>: see pvc.lookup in the header (<n> names its scratch file).
lookup_loop() {
  h="${1%/*}"
  srv="${1#*/}"
  while :; do
    t0=$(uptime_ms)
    timeout 5 nslookup "$h" "$srv" >/tmp/ns-$2.out 2>&1
    rc=$?
    dt=$(($(uptime_ms) - t0))
    a=$(awk '/^Name:/ { n = 1 } n && /^Address:? / { print $2; exit }' /tmp/ns-$2.out)
    if [ $rc = 0 ] && [ -n "$a" ]; then
      say "lookup $1 ok $dt $a"
    else
      why=$(grep -v '^$' /tmp/ns-$2.out | tail -n 1 | tr -s ' \t' ' ')
      [ $rc = 143 ] && why="timeout after 5 s"
      say "lookup $1 fail $dt ${why:-exit $rc}"
    fi
    sleep 2
  done
}

# meta_get <what> <path>: one request of pvc.meta (see the header).
meta_get() {
  t0=$(uptime_ms)
  timeout 5 wget -q -O /tmp/meta.out "http://169.254.169.254$2" 2>/tmp/meta.err
  rc=$?
  dt=$(($(uptime_ms) - t0))
  if [ $rc = 0 ]; then
    say "meta $1 ok $dt $(oneline /tmp/meta.out)"
  else
    why=$(oneline /tmp/meta.err)
    [ $rc = 143 ] && why="timeout after 5 s"
    say "meta $1 fail $dt ${why:-exit $rc}"
  fi
}

# after_lease: the pvc.lookup and pvc.meta loops, started once the first lease is bound.
after_lease() {
  [ -n "$lookups$meta" ] || return
  while [ ! -f /tmp/dhcp-bound ]; do sleep 0.5; done
  i=0
  for l in $(echo "$lookups" | tr ',' ' '); do
    lookup_loop "$l" "$i" &
    i=$((i + 1))
  done
  [ -n "$meta" ] || return
  while :; do
    meta_get instance-id /latest/meta-data/instance-id
    meta_get user-data /latest/user-data
    sleep "$meta"
  done &
}

# disk_up: the raw disk's marker (see the header). Runs in the foreground, before net_up, so the
# two never insmod the shared virtio_pci at the same time.
disk_up() {
  load_modules disk || return
  i=0
  while [ ! -b "$disk" ]; do
    i=$((i + 1))
    if [ $i -gt 100 ]; then say "disk error no $disk after 10 s"; return; fi
    sleep 0.1
  done
  dd if="$disk" of=/tmp/sector0 bs=512 count=1 2>/tmp/dd.err || { say "disk error read $disk: $(cat /tmp/dd.err)"; return; }
  first=$(tr -d '\000' </tmp/sector0 | head -n 1)
  case "$first" in
    PVCM:*) say "marker boot ${first#PVCM:}" ;;
    *) say "marker boot none" ;;
  esac
  case "$marker" in
    write:*)
      t="${marker#write:}"
      if printf 'PVCM:%s\n' "$t" | dd of="$disk" bs=512 count=1 conv=sync,notrunc,fsync 2>/tmp/dd.err && sync; then
        say "marker wrote $t"
      else
        say "marker error write $disk: $(cat /tmp/dd.err)"
      fi ;;
    '') ;;
    *) say "marker error unknown pvc.marker=$marker (expected write:<text>)" ;;
  esac
  [ -n "$diskwrite" ] || return
  (
    n=0
    while sleep "$diskwrite"; do
      if printf 'PVCW:%s %s\n' "$name" "$n" | dd of="$disk" bs=512 seek=8 count=1 conv=sync,notrunc,fsync 2>/dev/null; then r=ok; else r=fail; fi
      say "disk write $n $r"
      n=$((n + 1))
    done
  ) &
}

[ -n "$disk" ] && disk_up
[ "$net" = dhcp ] && net_up &

n=0
while :; do
  echo "pvc-guest $name tick $n"
  n=$((n + 1))
  sleep 1
done
