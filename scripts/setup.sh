#!/usr/bin/env bash
# Installs everything the cluster and the tests need on a Debian 12 machine, as root, idempotently:
# Debian packages, npm packages (npm ci), and the TypeScript build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
  # Zookeeper ensemble (coordinators)
  zookeeper netcat-openbsd
  # libvirt + QEMU (TCG guests here; KVM in production) and the headers @unraid/libvirt builds against
  libvirt-daemon-system libvirt-clients libvirt-dev qemu-system-x86 qemu-utils pkg-config
  # the tiny guest: Debian's kernel + a busybox initramfs
  linux-image-cloud-amd64 busybox-static cpio
  # IPMI simulator and client (fencing)
  openipmi ipmitool
  # host networking in namespaces
  iproute2 util-linux nftables dnsmasq-base bridge-utils procps psmisc
  # native addon build
  python3 make g++ git
)

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "setup: must run as root (it installs Debian packages and creates network namespaces)" >&2
    exit 2
  fi
}

install_debian_packages() {
  local missing=()
  for p in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: Debian packages present"
    return
  fi
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_npm_packages() {
  local stamp=node_modules/.pvc-lock-hash
  local want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "setup: npm packages present"
    return
  fi
  echo "setup: npm ci"
  npm ci --no-fund --no-audit --loglevel=error
  echo "$want" > "$stamp"
}

build() {
  echo "setup: building (tsc -b through nx)"
  NX_DAEMON=false NX_NO_CLOUD=true npx --no-install nx run-many -t build --outputStyle=static >/dev/null
}

need_root
install_debian_packages
install_npm_packages
build
echo "setup: done"
