#!/bin/busybox sh
# /init of the tiny test guest (busybox initramfs, no disk; network only when asked for).
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
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox --install -s
name=guest
net=
renew=5
pings=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    pvc.name=*) name="${arg#pvc.name=}" ;;
    pvc.net=*) net="${arg#pvc.net=}" ;;
    pvc.renew=*) renew="${arg#pvc.renew=}" ;;
    pvc.ping=*) pings="${arg#pvc.ping=}" ;;
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

net_up() {
  dir=/lib/modules/pvc
  if [ -f $dir/unavailable ]; then say "net error $(cat $dir/unavailable)"; return; fi
  while read -r ko; do
    insmod "$dir/$ko" 2>/tmp/insmod.err || say "net insmod $ko failed: $(cat /tmp/insmod.err)"
  done <$dir/order
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
}

[ "$net" = dhcp ] && net_up &

n=0
while :; do
  echo "pvc-guest $name tick $n"
  n=$((n + 1))
  sleep 1
done
