#!/bin/sh
# /init of the guest that `cargo xtask vm` boots (busybox): load the unmodified xdma.ko with
# the run's module parameters, run the check list (checks.sh) or the one program the run names
# (/etc/xdma-run), print the driver's complaints for the log, and power off.
#
# The kernel command line carries the run: xdma_variant=mm|stream|combined, xdma_mode=msix|
# msi|legacy|poll (for the log and the mode checks), xdma_params=NAME=VALUE,NAME=VALUE (the
# module parameters), xdma_vendor=off|short|full (how much of the vendor's test scripts the
# check list runs). Every result is one line, `PASS <name>` or `FAIL <name>: <why>`, and the
# last line is `=== guest done`: xtask counts the first and treats a run without the second as
# failed. When insmod fails, nothing else runs (neither the check list nor the program, which
# would only meet a missing driver): the line `=== insmod failed: <why>` says so.

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp
mount -t tmpfs tmp /tmp
export PATH=/bin:/sbin:/opt/run/bin

VARIANT=
MODE=
PARAMS=
VENDOR=off
for word in $(cat /proc/cmdline); do
    case "$word" in
        xdma_variant=*) VARIANT=${word#xdma_variant=} ;;
        xdma_mode=*) MODE=${word#xdma_mode=} ;;
        xdma_params=*) PARAMS=$(echo "${word#xdma_params=}" | tr ',' ' ') ;;
        xdma_vendor=*) VENDOR=${word#xdma_vendor=} ;;
    esac
done

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

echo "=== guest up after $(cut -d' ' -f1 /proc/uptime) s: kernel $(uname -r), card $VARIANT, mode $MODE"
echo "=== insmod xdma.ko $PARAMS"
# shellcheck disable=SC2086 # the parameters are separate words on purpose
if out=$(insmod /lib/xdma/xdma.ko $PARAMS 2>&1); then
    loaded=1
    pass "driver loads"
    echo "=== driver loaded after $(cut -d' ' -f1 /proc/uptime) s"
else
    loaded=0
    # insmod's errno and the kernel's own reason (a bad value, an unknown symbol...).
    why=$(echo "$out" | tr '\n' ' ' | sed 's/ *$//')
    kernel=$(dmesg | grep -E '^\[[ 0-9.]*\] xdma' | tail -1 | sed 's/^\[[^]]*\] //')
    [ -n "$kernel" ] && why="$why (kernel: $kernel)"
    fail "driver loads" "insmod: $why"
    echo "=== insmod failed: $why"
fi

if [ "$loaded" = 0 ]; then
    : # Nothing to run against: the kernel's lines below say why the module was refused.
elif [ -x /etc/xdma-run ]; then
    # One program instead of the check list: its exit code is the result.
    echo "=== running $(cat /etc/xdma-run.name)"
    /etc/xdma-run
    rc=$?
    if [ "$rc" = 0 ]; then
        pass "program $(cat /etc/xdma-run.name)"
    else
        fail "program $(cat /etc/xdma-run.name)" "exit code $rc"
    fi
else
    . /checks.sh
    run_checks
fi

echo "=== driver messages (errors and warnings)"
# The driver's own lines that report trouble (not its banner, nor the kernel's note about an
# unsigned module), and any kernel splat. The check list's own timeouts (the stream checks
# end every read of a stopped source with one) take four lines each, hence the long tail.
dmesg | grep -E '(xdma|XDMA).*' | grep -vE 'command line|xdma_params=|xdma_mod_init|module verification|out-of-tree' |
    grep -iE 'err|fail|timed out|timeout|abort|invalid|unable|bad|half-way|busy' | tail -100
dmesg | grep -E 'BUG:|WARNING:|Call Trace|Oops|Kernel panic' | tail -20
echo "=== guest done after $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
