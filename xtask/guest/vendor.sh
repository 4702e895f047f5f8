# The vendor's own test scripts (dma_ip_drivers, XDMA/linux-kernel/tests) as steps of the check
# list, sourced by checks.sh, whose DEV, TMP, VARIANT, the channel lists, pass, fail,
# user_write and drain they use. The scripts run unmodified from /opt/xdma/tests, a copy of the
# checkout's folder with its data files, so that their relative paths hold: the vendor tools
# they call as ../tools (../../tools from scripts_mm) are in /opt/xdma/tools, and bash, which
# the top-level ones name in their first line, is /bin/bash (scripts_mm's run in busybox sh,
# as their `#!/bin/sh` says).
#
# VENDOR (xdma_vendor= on the kernel command line) picks the sizes: `short` keeps to what
# `cargo xtask test` can spend on two runs (the scripts with sizes of their own,
# unaligned.sh and perform_hwcount.sh, run whole on a card with memory-mapped engines), `full` runs every script at its own sizes (and
# io_sweep.sh up to the largest transfer the guest's memory holds), `off` runs none. Each step
# prints one PASS or FAIL line with the script's time; a script is judged by its exit code, by
# its own last words, by the logs it leaves (the scripts do not check everything they run:
# io.sh ignores the tools' exit codes and counts a missing file as a match, perform_hwcount.sh
# exits with tee's code), and by the kernel log since it started: any BUG:, Oops, segfault,
# general protection fault or panic fails the step.

VENDOR_TESTS=/opt/xdma/tests

# What the kernel logs when something broke: the kernel itself (BUG:, Oops, a general
# protection fault, a panic) or a program (segfault).
KERNEL_TROUBLE='BUG:|Oops|segfault|general protection fault|Kernel panic'

vendor_step_no=0

# The guest's uptime in hundredths of a second.
uptime_cs() { sed 's/^\([0-9]*\)\.\([0-9]*\) .*/\1\2/' /proc/uptime; }

# vendor_run DIR SECONDS SCRIPT ARGS...: runs SCRIPT in DIR, the folder its relative paths are
# written for, for at most SECONDS; its output goes to $TMP/vendor.out. Sets vendor_rc and
# vendor_time (seconds). A line in the kernel log marks the start, for vendor_kernel_trouble.
vendor_run() {
    local run_dir=$1 secs=$2 t0 t1
    shift 2
    vendor_step_no=$((vendor_step_no + 1))
    echo "xdma-checks: vendor step $vendor_step_no: $*" >/dev/kmsg
    echo "=== vendor step $vendor_step_no: (cd $run_dir && $*)"
    t0=$(uptime_cs)
    (cd "$run_dir" && timeout "$secs" "$@") >"$TMP/vendor.out" 2>&1
    vendor_rc=$?
    t1=$(uptime_cs)
    vendor_time=$(((t1 - t0) / 100)).$(((t1 - t0) % 100 / 10))
    [ "$vendor_rc" = 143 ] && vendor_rc="$vendor_rc (killed after $secs s)"
}

# The kernel log's trouble lines since the last vendor_run started (the whole log if its mark
# has already rotated out of the kernel's buffer).
vendor_kernel_trouble() {
    local mark
    dmesg >"$TMP/dmesg"
    mark="xdma-checks: vendor step $vendor_step_no: "
    if grep -qF "$mark" "$TMP/dmesg"; then
        sed -n "/$mark/,\$p" "$TMP/dmesg" | grep -E "$KERNEL_TROUBLE" | head -5
    else
        grep -E "$KERNEL_TROUBLE" "$TMP/dmesg" | head -5
    fi
}

# vendor_verdict NAME WHY: the step's line. WHY is what the checks of the script's output and
# logs found wrong (empty: nothing); the kernel log is checked here. On a failure the end of
# the script's output goes to the console first.
vendor_verdict() {
    local why=$2 trouble
    trouble=$(vendor_kernel_trouble)
    if [ -n "$trouble" ]; then
        why="${why:+$why; }the kernel logged: $(echo "$trouble" | sed 's/^\[[^]]*\] //' | tr '\n' ' ')"
    fi
    if [ -z "$why" ]; then
        pass "vendor $1 in $vendor_time s"
    else
        tail -20 "$TMP/vendor.out" | sed 's/^/  | /'
        fail "vendor $1" "$why (after $vendor_time s)"
    fi
}

# expect_rc_and_line LINE: what is wrong if the script did not exit with 0 or did not print
# LINE (a fixed string), else nothing.
expect_rc_and_line() {
    if [ "$vendor_rc" != 0 ]; then
        echo "exit code $vendor_rc"
    elif ! grep -qF "$1" "$TMP/vendor.out"; then
        echo "no line '$1'"
    fi
}

words() { echo $#; }

# run_test.sh, the vendor's entry point: it counts the engines from their identifiers, tells
# memory-mapped from streaming and runs dma_memory_mapped_test.sh or dma_streaming_test.sh on
# 1 KiB transfers. Streaming, it loops H2C 0 back to C2H 0, which the card does in LOOP mode.
# It fits the mm and stream cards, not the combined one (both kinds of engine: it would take
# the memory-mapped H2C 0 for a stream).
vendor_run_test() {
    local kind why line
    case "$VARIANT" in
        mm) kind="memory mapped" ;;
        stream) kind="streaming" ;;
        *) return ;;
    esac
    [ "$kind" = streaming ] && user_write $REG_CONTROL $MODE_LOOP
    vendor_run "$VENDOR_TESTS" 120 ./run_test.sh
    [ "$kind" = streaming ] && user_write $REG_CONTROL $MODE_OFF
    why=$(expect_rc_and_line "Info: All tests in run_tests.sh passed.")
    for line in "Info: Number of enabled h2c channels = $(words $H2C)" \
        "Info: Number of enabled c2h channels = $(words $C2H)" \
        "Info: The PCIe DMA core is $kind."; do
        [ -z "$why" ] && ! grep -qxF "$line" "$TMP/vendor.out" && why="no line '$line'"
    done
    [ -n "$why" ] && [ "$kind" = streaming ] && drain "${DEV}_c2h_0"
    vendor_verdict "run_test.sh ($kind)" "$why"
}

# dma_memory_mapped_test.sh SIZE COUNT on H2C 0 and C2H 0: four blocks of the data files
# written, read back and compared.
vendor_mm_test() {
    local why passed
    has "$H2C_MM" 0 && has "$C2H_MM" 0 || return
    vendor_run "$VENDOR_TESTS" 120 ./dma_memory_mapped_test.sh xdma0 "$1" "$2" 1 1
    why=$(expect_rc_and_line "Info: All PCIe DMA memory mapped tests passed.")
    passed=$(grep -c "^Info: Data check passed" "$TMP/vendor.out")
    [ -z "$why" ] && [ "$passed" != 4 ] && why="$passed of 4 blocks checked"
    vendor_verdict "dma_memory_mapped_test.sh, $1 bytes x $2" "$why"
}

# dma_streaming_test.sh SIZE COUNT on the stream card's H2C 0 looped back to C2H 0 (LOOP).
vendor_stream_test() {
    local why
    [ "$VARIANT" = stream ] || return
    user_write $REG_CONTROL $MODE_LOOP
    vendor_run "$VENDOR_TESTS" 120 ./dma_streaming_test.sh "$1" "$2" 1
    user_write $REG_CONTROL $MODE_OFF
    why=$(expect_rc_and_line "Info: All PCIe DMA streaming tests passed.")
    [ -z "$why" ] && ! grep -qF "Info: Data check passed for c2h and h2c channel 0." "$TMP/vendor.out" &&
        why="channel 0 not checked"
    [ -n "$why" ] && drain "${DEV}_c2h_0"
    vendor_verdict "dma_streaming_test.sh, $1 bytes x $2" "$why"
}

# perf_log_problems FILE DIRECTION: what is wrong in one of perform_hwcount.sh's logs: each
# `** HW <DIRECTION>` run must end with the driver's PERF_STOP succeeding and none of its
# ioctls failing.
perf_log_problems() {
    local runs stops failed
    runs=$(grep -c "^\*\* HW $2 " "$1" 2>/dev/null)
    stops=$(grep -c "^IOCTL_XDMA_PERF_STOP succesful" "$1" 2>/dev/null)
    failed=$(grep -c "^ioctl(\.\.\., IOCTL_XDMA_PERF" "$1" 2>/dev/null)
    if [ ! -s "$1" ]; then
        echo "$2: no log $1"
    elif [ "${runs:-0}" = 0 ] || [ "$stops" != "$runs" ] || [ "$failed" != 0 ]; then
        echo "$2: $stops of ${runs:-0} runs stopped, $failed ioctls failed"
    fi
}

# perform_hwcount.sh: the driver's performance ioctl on H2C 0 and C2H 0 at 64 B to 4 MiB, two
# seconds each; the script exits with tee's code, so its two logs are read.
vendor_perform() {
    local why d p
    has "$H2C_MM" 0 && has "$C2H_MM" 0 || return
    vendor_run "$VENDOR_TESTS" 300 ./perform_hwcount.sh 1 1
    why=
    [ "$vendor_rc" != 0 ] && why="exit code $vendor_rc"
    for d in H2C C2H; do
        p=$(perf_log_problems "$VENDOR_TESTS/hw_log_$(echo $d | tr A-Z a-z).txt" $d)
        [ -n "$p" ] && why="${why:+$why; }$p"
    done
    vendor_verdict "perform_hwcount.sh (H2C 0 and C2H 0)" "$why"
}

# io_logs_problems DIR ADDRESS OFFSET SIZES: what is wrong with the per-transfer logs io.sh
# left in DIR for each size of SIZES at ADDRESS and OFFSET: each must hold the tool's report of
# the whole size moved (`<node> ** Average BW = <size>, <rate>`), which it prints only after
# the transfer and the file it read or wrote were complete. io.sh itself looks at neither exit
# code, and compares the two files with diff, whose "missing file" it takes for a match. (It
# logs the report with an unquoted echo, so the `**` comes out as the names of the files in
# its folder.)
io_logs_problems() {
    local bad=0 first= sz way log
    for sz in $4; do
        for way in h2c c2h; do
            log="$1/$way-io$sz-o$3-a$2.log"
            if ! grep -q "/dev/xdma0_${way}_0 .*Average BW = $sz, " "$log" 2>/dev/null; then
                bad=$((bad + 1))
                [ -z "$first" ] && first="$(basename "$log"): $(tr '\n' ' ' <"$log" 2>/dev/null || echo missing)"
            fi
        done
    done
    [ "$bad" != 0 ] && echo "$bad transfers without their tool's report, first $first"
}

# scripts_mm/unaligned.sh: every size of its list (1 B to 8 KiB) at every buffer offset of its
# list, H2C 0 then C2H 0, compared. Its sizes are its own, so it runs whole or not at all.
vendor_unaligned() {
    local script="$VENDOR_TESTS/scripts_mm/unaligned.sh" logs=/tmp/xdma0_h2c0_c2h0_unaligned
    local io_list offsets why off p
    has "$H2C_MM" 0 && has "$C2H_MM" 0 || return
    # The lists the script goes through, read from it, to find the log of each transfer.
    io_list=$(sed -n 's/^io_list="\(.*\)"$/\1/p' "$script")
    offsets=$(sed -n 's/^offset_list="\(.*\)"$/\1/p' "$script")
    vendor_run "$VENDOR_TESTS/scripts_mm" 900 ./unaligned.sh xdma0 0 0 1 0
    why=$(expect_rc_and_line "COMPLETED!")
    if [ -z "$why" ]; then
        for off in $offsets; do
            p=$(io_logs_problems $logs 0 "$off" "$io_list")
            [ -n "$p" ] && why="offset $off: $p" && break
        done
    fi
    # The script leaves its 128 MiB data file and the logs in /tmp, a tmpfs.
    rm -rf "$logs"
    vendor_verdict "scripts_mm/unaligned.sh ($(words $io_list) sizes x $(words $offsets) offsets)" "$why"
}

# The sizes io_sweep.sh moves from MIN to MAX: doubling, the last one MAX.
sweep_sizes() {
    local sz=$1
    while :; do
        echo "$sz"
        [ "$sz" -ge "$2" ] && return
        sz=$((sz * 2))
        [ "$sz" -gt "$2" ] && sz=$2
    done
}

# The largest power of two io_sweep.sh can move with the memory the guest has: its data file
# (blocks of 64 MiB, one more than the largest size holds whole, and at least two), the file
# H2C wrote and the file C2H writes must fit in /tmp (a tmpfs, half the RAM), and those, the
# C2H buffer and 64 MiB to spare for dd's block and the rest of the guest in the free memory.
largest_sweep() {
    local free_kib tmp_kib sz next blocks files_kib
    free_kib=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
    tmp_kib=$(df -k /tmp | awk 'NR == 2 { print $4 }')
    sz=1024
    while :; do
        next=$((sz * 2))
        blocks=$((next / 1024 / 65536))
        [ "$blocks" = 0 ] && blocks=1
        files_kib=$(((blocks + 1) * 65536 + 2 * next / 1024))
        [ "$files_kib" -ge "$tmp_kib" ] && break
        [ $((files_kib + next / 1024 + 65536)) -gt "$free_kib" ] && break
        sz=$next
    done
    echo "$sz"
}

# io_sweep.sh MIN MAX at card address 0, buffer offset 0, H2C 0 then C2H 0, compared; it
# sleeps 5 s between sizes.
vendor_io_sweep() {
    local logs=/tmp/xdma0_h2c0c2h0 why
    has "$H2C_MM" 0 && has "$C2H_MM" 0 || return
    vendor_run "$VENDOR_TESTS/scripts_mm" 1200 ./io_sweep.sh xdma0 0 0 0 0 "$1" "$2" 1 0
    why=$(expect_rc_and_line "COMPLETED!")
    [ -z "$why" ] && why=$(io_logs_problems $logs 0 0 "$(sweep_sizes "$1" "$2")")
    rm -rf "$logs"
    vendor_verdict "scripts_mm/io_sweep.sh, $1 to $2 bytes" "$why"
}

# The steps, at the sizes VENDOR asks for. The C2H performance run of perform_hwcount.sh is
# last of all, since it is the one most likely to leave the engine, or the guest, in a state
# the others would trip over.
check_vendor_scripts() {
    case "$VENDOR" in
        short)
            vendor_run_test
            vendor_mm_test 4096 2
            vendor_stream_test 4096 2
            vendor_io_sweep 65536 131072
            # Their sizes are fixed in them, so they run whole (about a minute each on the
            # mm card; the stream card has no memory-mapped engine for them).
            vendor_unaligned
            vendor_perform
            ;;
        full)
            vendor_run_test
            vendor_mm_test 4096 16
            vendor_stream_test 4096 16
            vendor_unaligned
            vendor_io_sweep 1 "$(largest_sweep)"
            vendor_perform
            ;;
    esac
}
