#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine: makes a minimal Debian 12 root from
# Debian's packages (debootstrap --variant=minbase bookworm), copies a clean clone of the
# project's committed HEAD into it, and runs, inside it with chroot and as root,
#   bash scripts/quickstart.sh     (installs what the example needs, builds it, runs it)
#   bash scripts/test.sh           (installs the rest, the whole test suite)
# Fails if either fails, so a package that only a hand-made machine has cannot hide.
#
# The base root is downloaded once and kept as a tarball, build-fresh/bookworm-minbase.tar; every
# run unpacks it afresh, so the project's packages are installed anew each time. Needs root,
# network access to a Debian mirror and about 4 GB of disk.
#
# Usage: bash scripts/fresh-machine-test.sh
#   NABLA_DEBIAN_MIRROR   the mirror (default http://deb.debian.org/debian)
#   NABLA_FRESH_DIR       where the tarball and the root live (default build-fresh)
#   NABLA_FRESH_KEEP=1    keep the root after the run, for a look
#
# Exit status: 0 when both commands pass; 1 when one fails; 77 when the fresh root cannot be made
# (no root rights, no mount namespace, no mirror, no chroot), which says nothing about the project.
#
# It runs in a mount namespace of its own (unshare), so the mounts it makes for the root (/proc,
# /dev, ...) are never seen by the machine and vanish with it, even when the run is killed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
project=$(pwd)

if [[ -z "${NABLA_FRESH_NAMESPACE:-}" ]]; then
    if [[ $(id -u) -ne 0 ]] || ! unshare --mount --propagation private true 2>/dev/null; then
        echo "fresh-machine-test: cannot make the fresh root: a private mount namespace needs root and unshare" >&2
        exit 77
    fi
    NABLA_FRESH_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

mirror=${NABLA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(realpath -m "${NABLA_FRESH_DIR:-build-fresh}")
tarball=$work/bookworm-minbase.tar
root=$work/root

say() { echo "fresh-machine-test: $*"; }
cannot() {
    say "cannot make the fresh root: $*" >&2
    exit 77
}

[[ $(id -u) -eq 0 ]] || cannot "run as root (debootstrap, mount and chroot need it)"
command -v git >/dev/null 2>&1 || cannot "git is needed to clone the project"

# The mounts a root needs for compilers, sanitizers and valgrind (/proc, /dev, /dev/shm).
mounts=(proc sys dev dev/pts dev/shm)
unmount_all() {
    local m
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        m=$root/${mounts[i]}
        if mountpoint -q "$m" 2>/dev/null; then
            umount -l "$m" || true
        fi
    done
}
finish() {
    local status=$?
    set +e  # the cleanup never changes the exit status
    unmount_all
    if [[ "${NABLA_FRESH_KEEP:-0}" != 1 && -d "$root" ]]; then
        rm -rf --one-file-system "$root" || say "could not remove $root entirely"
    fi
    exit "$status"
}
trap finish EXIT

mkdir -p "$work"
if [[ ! -s "$tarball" ]]; then
    if ! command -v debootstrap >/dev/null 2>&1; then
        say "installing debootstrap on this machine"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap ||
            { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \
                --no-install-recommends debootstrap; } || cannot "debootstrap cannot be installed"
    fi
    say "making a minimal Debian 12 root from $mirror"
    start=$(date +%s)
    rm -rf --one-file-system "$work/base"
    debootstrap --variant=minbase bookworm "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { tail -n 20 "$work/debootstrap.log" >&2; cannot "debootstrap failed (log: $work/debootstrap.log)"; }
    tar -C "$work/base" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf --one-file-system "$work/base"
    say "base root made in $(($(date +%s) - start)) s, kept as $tarball"
fi

unmount_all
rm -rf --one-file-system "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball" || cannot "the tarball $tarball does not unpack"

# A fresh Debian 12 machine's package sources: the release, its updates and security updates.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${NABLA_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
EOF
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# A clean clone of what is committed: untracked and modified files stay out.
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
    say "WARNING: uncommitted changes are not tested; the fresh root gets the committed HEAD"
fi
git clone --quiet --no-hardlinks "$project" "$root/root/nabla"
say "testing commit $(git -C "$root/root/nabla" rev-parse --short HEAD)"

mount -t proc proc "$root/proc" || cannot "mounting /proc failed"
mount -t sysfs sys "$root/sys" || cannot "mounting /sys failed"
mount --bind /dev "$root/dev" || cannot "binding /dev failed"
mount --bind /dev/pts "$root/dev/pts" || cannot "binding /dev/pts failed"
mount -t tmpfs tmpfs "$root/dev/shm" || cannot "mounting /dev/shm failed"
chroot "$root" /bin/true || cannot "chroot does not work here"

# Runs one README command inside the root, with a clean environment, and times it; its output
# also goes to $work/<log>.
seconds=()
run_inside() {
    local log=$1 start status
    shift
    say "+ $*"
    start=$(date +%s)
    status=0
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c "cd /root/nabla && $*" 2>&1 | tee "$work/$log" || status=$?
    seconds+=("$(($(date +%s) - start))")
    return "$status"
}

quickstart_status=0
run_inside quickstart.log bash scripts/quickstart.sh </dev/null || quickstart_status=$?
tests_status=0
run_inside test.log bash scripts/test.sh </dev/null || tests_status=$?

echo
say "bash scripts/quickstart.sh: exit status $quickstart_status in ${seconds[0]} s"
say "bash scripts/test.sh: exit status $tests_status in ${seconds[1]} s"
if [[ $quickstart_status -ne 0 || $tests_status -ne 0 ]]; then
    say "FAILED on a fresh Debian 12 root (logs: $work/quickstart.log, $work/test.log)"
    tail -n 1 "$work/test.log" 2>/dev/null || true
    exit 1
fi
say "both README commands pass on a fresh Debian 12 root"
# The test suite's own closing line last: "N passed, N failed, N skipped".
tail -n 1 "$work/test.log"
