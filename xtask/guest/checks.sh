# The check list of `cargo xtask vm`, sourced by /init (busybox sh) once the driver is loaded.
# VARIANT, MODE, pass and fail come from /init. Each check prints one line, `PASS <name>` or
# `FAIL <name>: <why>`; a check that needs what the variant lacks is not run.

DEV=/dev/xdma0
TMP=/tmp/checks
mkdir -p "$TMP"

# The card's user registers (hdl/regs.toml).
REG_ID=0x000
REG_VERSION=0x004
REG_SCRATCH=0x008
REG_CAPS=0x00C
REG_CONTROL=0x010
REG_ERROR=0x020
REG_SRC0_FRAME_LEN=0x100
REG_SRC0_GAP=0x104
REG_CAP_BASE=0x300
REG_CAP_SIZE=0x304
REG_CAP_WPTR=0x308
REG_CAP_IRQ_LEVEL=0x314
REG_CAP_FRAMES=0x320
REG_IRQ_ENABLE=0x400
REG_IRQ_STATUS=0x404

# The channels of each variant, and which of them are memory-mapped.
case "$VARIANT" in
    mm) H2C="0" C2H="0" H2C_MM="0" C2H_MM="0" CAPS=0x001f2101 ;;
    stream) H2C="0" C2H="0 1" H2C_MM="" C2H_MM="" CAPS=0x00001f92 ;;
    combined) H2C="0 1" C2H="0 1 2" H2C_MM="0" C2H_MM="0" CAPS=0x201f3f93 ;;
    *) H2C="" C2H="" H2C_MM="" C2H_MM="" CAPS= ;;
esac

# A 32-bit read through the vendor's reg_rw: the value as it prints it (0x%08x), or nothing.
reg_read() {
    reg_rw "$1" "$2" w 2>/dev/null |
        sed -n 's/^Read 32-bit value at address .*: \(0x[0-9a-fA-F]*\)$/\1/p'
}

reg_write() {
    reg_rw "$1" "$2" w "$3" >/dev/null 2>&1
}

user_read() { reg_read "${DEV}_user" "$1"; }
user_write() { reg_write "${DEV}_user" "$1" "$2"; }

hex() { printf '0x%08x' "$(($1))"; }

# Whether $2 is one of the words of $1.
has() {
    case " $1 " in *" $2 "*) return 0 ;; esac
    return 1
}

check_nodes() {
    missing=
    for n in user control events_0 events_15; do
        [ -c "${DEV}_$n" ] || missing="$missing ${n}"
    done
    for c in $H2C; do [ -c "${DEV}_h2c_$c" ] || missing="$missing h2c_$c"; done
    for c in $C2H; do [ -c "${DEV}_c2h_$c" ] || missing="$missing c2h_$c"; done
    extra=
    for c in 0 1 2 3; do
        if [ -e "${DEV}_h2c_$c" ] && ! has "$H2C" "$c"; then extra="$extra h2c_$c"; fi
        if [ -e "${DEV}_c2h_$c" ] && ! has "$C2H" "$c"; then extra="$extra c2h_$c"; fi
    done
    if [ -n "$missing" ]; then
        fail "driver nodes" "missing:$missing (have: $(ls /dev | grep xdma | tr '\n' ' '))"
    elif [ -n "$extra" ]; then
        fail "driver nodes" "channels the $VARIANT card lacks:$extra"
    else
        pass "driver nodes (h2c: $H2C; c2h: $C2H; events 0-15)"
    fi
}

check_user_registers() {
    id=$(user_read $REG_ID)
    if [ "$id" = 0x44415131 ]; then pass "user BAR ID reads DAQ1"; else fail "user BAR ID reads DAQ1" "read '$id'"; fi
    v=$(user_read $REG_VERSION)
    if [ -n "$v" ] && [ $((v >> 16)) -ge 0 ]; then pass "user BAR VERSION reads ($v)"; else fail "user BAR VERSION reads" "read '$v'"; fi
    caps=$(user_read $REG_CAPS)
    if [ "$caps" = "$CAPS" ]; then
        pass "user BAR CAPS is the $VARIANT card's ($caps)"
    else
        fail "user BAR CAPS is the $VARIANT card's" "read '$caps', expected $CAPS"
    fi
    for value in 0xa5a5f00d 0x12345678 0x00000000 0xffffffff; do
        user_write $REG_SCRATCH $value
        got=$(user_read $REG_SCRATCH)
        if [ "$got" = "$value" ]; then
            pass "SCRATCH write $value reads back"
        else
            fail "SCRATCH write $value reads back" "read '$got'"
        fi
    done
}

# check_identifier NAME OFFSET EXPECTED_UPPER_16_BITS [STREAM 0|1] [CHANNEL]
check_identifier() {
    id=$(reg_read "${DEV}_control" "$2")
    why=
    if [ -z "$id" ]; then
        why="reg_rw read nothing"
    elif [ "$(hex $((id >> 16)))" != "$(hex "$3")" ]; then
        why="read $id, expected $3xxxx"
    elif [ -n "$4" ] && [ $(((id >> 15) & 1)) != "$4" ]; then
        why="read $id: stream bit $(((id >> 15) & 1)), expected $4"
    elif [ -n "$5" ] && [ $(((id >> 8) & 15)) != "$5" ]; then
        why="read $id: channel $(((id >> 8) & 15)), expected $5"
    fi
    if [ -z "$why" ]; then pass "$1 identifier ($id)"; else fail "$1 identifier" "$why"; fi
}

check_identifiers() {
    for c in $H2C; do
        if has "$H2C_MM" "$c"; then s=0; else s=1; fi
        check_identifier "H2C$c engine" $((c * 0x100)) 0x1fc0 $s "$c"
        check_identifier "H2C$c SGDMA" $((0x4000 + c * 0x100)) 0x1fc4 "" "$c"
    done
    for c in $C2H; do
        if has "$C2H_MM" "$c"; then s=0; else s=1; fi
        check_identifier "C2H$c engine" $((0x1000 + c * 0x100)) 0x1fc1 $s "$c"
        check_identifier "C2H$c SGDMA" $((0x5000 + c * 0x100)) 0x1fc5 "" "$c"
    done
    check_identifier "IRQ block" 0x2000 0x1fc2
    check_identifier "config block" 0x3000 0x1fc3
    check_identifier "SGDMA common block" 0x6000 0x1fc6
}

# The interrupt mode the driver ended up in, from the vectors the kernel allocated.
check_interrupt_mode() {
    dir=/sys/bus/pci/devices/0000:00:02.0
    kinds=$(cat "$dir"/msi_irqs/* 2>/dev/null | sort -u | tr '\n' ' ')
    count=$(ls "$dir"/msi_irqs 2>/dev/null | wc -l)
    case "$MODE" in
        msix | poll) want="msix " ;;
        msi) want="msi " ;;
        legacy) want="" ;;
        *) return ;;
    esac
    if [ "$kinds" = "$want" ]; then
        pass "interrupt mode $MODE ($count message vectors)"
    else
        fail "interrupt mode $MODE" "the kernel allocated '${kinds}' ($count vectors)"
    fi
}

# Interrupts the driver took, from /proc/interrupts (every xdma line, every CPU column).
xdma_interrupts() {
    grep xdma /proc/interrupts | awk '{ s += $2 } END { print s + 0 }'
}

# roundtrip NAME CARD_ADDRESS SIZE [BUFFER_OFFSET]: random data down H2C0 and back up C2H0.
roundtrip() {
    name="MM round trip $1"
    rm -f "$TMP/in" "$TMP/out"
    dd if=/dev/urandom of="$TMP/in" bs="$3" count=1 2>/dev/null
    off=
    [ -n "$4" ] && off="-o $4"
    # shellcheck disable=SC2086 # $off is an option and its value, or nothing
    if ! dma_to_device -d "${DEV}_h2c_0" -a "$2" -s "$3" $off -f "$TMP/in" >"$TMP/log" 2>&1; then
        fail "$name" "dma_to_device: $(tr '\n' ' ' <"$TMP/log")"
        return
    fi
    # shellcheck disable=SC2086
    if ! dma_from_device -d "${DEV}_c2h_0" -a "$2" -s "$3" $off -f "$TMP/out" >"$TMP/log" 2>&1; then
        fail "$name" "dma_from_device: $(tr '\n' ' ' <"$TMP/log")"
        return
    fi
    if cmp -s "$TMP/in" "$TMP/out"; then
        pass "$name"
    else
        fail "$name" "data differ: $(cmp "$TMP/in" "$TMP/out" 2>&1 | head -1)"
    fi
}

check_mm() {
    has "$H2C_MM" 0 && has "$C2H_MM" 0 || return
    before=$(xdma_interrupts)
    roundtrip "4 KiB at 0x0" 0x0 4096
    roundtrip "64 KiB at 0x10000" 0x10000 65536
    roundtrip "1 MiB at 0x100000" 0x100000 1048576
    roundtrip "4 KiB at 1 GiB" 0x40000000 4096
    roundtrip "4 KiB at the end of DDR" 0x7ffff000 4096
    roundtrip "5001 bytes at 0x1003" 0x1003 5001
    roundtrip "1 byte at 0x2001" 0x2001 1
    roundtrip "4 KiB at 0x3000, buffer offset 100" 0x3000 4096 100
    roundtrip "5001 bytes at 0x20003, buffer offset 4095" 0x20003 5001 4095
    # Two neighbours written apart and read together: neither write strays into the other.
    dd if=/dev/urandom of="$TMP/a" bs=4096 count=1 2>/dev/null
    dd if=/dev/urandom of="$TMP/b" bs=4096 count=1 2>/dev/null
    cat "$TMP/a" "$TMP/b" >"$TMP/ab"
    if dma_to_device -d "${DEV}_h2c_0" -a 0x50000 -s 4096 -f "$TMP/a" >/dev/null 2>&1 &&
        dma_to_device -d "${DEV}_h2c_0" -a 0x51000 -s 4096 -f "$TMP/b" >/dev/null 2>&1 &&
        dma_from_device -d "${DEV}_c2h_0" -a 0x50000 -s 8192 -f "$TMP/out" >/dev/null 2>&1 &&
        cmp -s "$TMP/ab" "$TMP/out"; then
        pass "MM neighbours written apart read back together"
    else
        fail "MM neighbours written apart read back together" "the 8 KiB read back differs or a transfer failed"
    fi
    after=$(xdma_interrupts)
    case "$MODE" in
        poll) pass "MM transfers in poll mode ($((after - before)) interrupts)" ;;
        *)
            if [ "$after" -gt "$before" ]; then
                pass "MM transfers raised interrupts ($((after - before)))"
            else
                fail "MM transfers raised interrupts" "/proc/interrupts counts did not move"
            fi
            ;;
    esac
}

# The user interrupt: capture frames into a ring in DDR until the fill level raises
# IRQ_STATUS.CAP_FILL, and read the event node the driver wakes for it.
check_user_interrupt() {
    has "$C2H_MM" 0 || return
    base=0x01000000
    user_write $REG_CONTROL 0
    user_write $REG_IRQ_STATUS 0x3
    user_write $REG_SRC0_FRAME_LEN 256
    user_write $REG_SRC0_GAP 64
    user_write $REG_CAP_BASE $base
    user_write $REG_CAP_SIZE 0x10000
    user_write $REG_CAP_IRQ_LEVEL 1024
    user_write $REG_IRQ_ENABLE 0x1
    # CAPTURE with source 0 running.
    user_write $REG_CONTROL 0x105
    ev=$(timeout 20 dd if="${DEV}_events_0" bs=4 count=1 2>/dev/null | od -An -tu4 | tr -d ' ')
    user_write $REG_CONTROL 0x5
    user_write $REG_IRQ_ENABLE 0
    frames=$(user_read $REG_CAP_FRAMES)
    status=$(user_read $REG_IRQ_STATUS)
    user_write $REG_IRQ_STATUS 0x3
    user_write $REG_CONTROL 0
    if [ -n "$ev" ] && [ "$ev" -gt 0 ]; then
        pass "user interrupt: capture fill level wakes events_0 ($ev event, $((frames)) frames)"
    else
        fail "user interrupt: capture fill level wakes events_0" "no event within 20 s (IRQ_STATUS $status, CAP_FRAMES $frames, CAP_WPTR $(user_read $REG_CAP_WPTR))"
    fi
    # The ring holds whole frames, the first one at its base.
    if dma_from_device -d "${DEV}_c2h_0" -a $base -s 256 -f "$TMP/frame" >/dev/null 2>&1 &&
        [ "$(od -An -tx1 -N5 "$TMP/frame" | tr -d ' ')" = 4441514601 ]; then
        pass "captured frame in DDR starts with DAQF version 1"
    else
        fail "captured frame in DDR starts with DAQF version 1" "read '$(od -An -tx1 -N8 "$TMP/frame" 2>/dev/null)'"
    fi
}

# The stream engines against the card's stream modes (stream and combined cards). Stream
# engines take the card's stream ports in order, so on the combined card the H2C stream is
# h2c_1 and the card's C2H streams 0 and 1 are c2h_1 and c2h_2.

# The stream checks' registers and CONTROL values (hdl/regs.toml): MODE in bits 2:0,
# CH0_EN bit 8, CH1_EN bit 9.
REG_CLEAR=0x014
REG_CHK_GOOD=0x200
REG_CHK_BAD=0x208
REG_CHK_MISSING=0x210
REG_CHK_ERR_MAGIC=0x218
MODE_OFF=0
MODE_LOOP=1
MODE_GEN=2
MODE_CHECK=4
CH0_EN=0x100

# with_c2h_timeout SECONDS COMMAND...: runs COMMAND with the driver's c2h_timeout lowered
# (the module reads it at every transfer).
with_c2h_timeout() {
    knob=/sys/module/xdma/parameters/c2h_timeout
    saved=$(cat $knob)
    echo "$1" >$knob
    shift
    "$@"
    rc=$?
    echo "$saved" >$knob
    return $rc
}

# Bytes of the smallest whole number of pages that holds $1 bytes: the read buffer of one
# frame. A C2H stream engine fills its descriptors (one per page) and goes on with the next
# packet in the next descriptor once a packet ends; with no descriptor left after the frame's
# last, each read ends at the frame's end and nothing of the next frame is taken and lost.
pages_for() { echo $((($1 + 4095) / 4096 * 4096)); }

# drain NODE: reads, one page at a time, whatever the stream still holds until a read finds
# nothing for a second. A source stopped with its CH*_EN bit leaves what its FIFO holds (up to
# 64 KiB of frames made while no read was posted) and the end of the frame it had begun; left
# there, they would be the next check's first frames, and a CLEAR (which empties the source
# but not the beats already on their way to the IP) would join the part of a frame already
# out to the next frame.
drain() {
    with_c2h_timeout 1 timeout 120 dma_from_device -d "$1" -e -s 4096 -c 100000 >/dev/null 2>&1
}

# src_setup SOURCE LENGTH [PATTERN]: frame source SOURCE (0 or 1) makes frames of LENGTH bytes
# with no gap, the stall policy (no frame dropped) and the pattern (0 counter, 1 PRBS).
src_setup() {
    base=$((0x100 + $1 * 0x40))
    user_write "$(hex $base)" "$2"
    user_write "$(hex $((base + 0x04)))" 0
    user_write "$(hex $((base + 0x08)))" "${3:-0}"
    user_write "$(hex $((base + 0x0c)))" 0x2545f491
    user_write "$(hex $((base + 0x10)))" 0
}

# read_frames C2H_CHANNEL LENGTH COUNT FILE: COUNT frames read with dma_from_device -e, one
# frame per read, appended to FILE; its output goes to FILE.log and its exit code is returned.
read_frames() {
    rm -f "$4"
    timeout 90 dma_from_device -d "${DEV}_c2h_$1" -e -s "$(pages_for "$2")" -c "$3" -f "$4" >"$4.log" 2>&1
}

# frames_verdict NAME FILE LENGTH COUNT RC: the result line for frames read into FILE by a
# dma_from_device that exited with RC. frame-check validates them (format, CRC, payload,
# sequence from 0 with none missing) and the file must be COUNT whole frames of LENGTH.
frames_verdict() {
    if [ "$5" != 0 ]; then
        fail "$1" "dma_from_device exited with $5: $(tr '\n' ' ' <"$2.log")"
        return
    fi
    if ! out=$(frame-check "$2" --frames "$4" 2>&1); then
        fail "$1" "$(echo "$out" | tr '\n' ' ')"
        return
    fi
    size=$(wc -c <"$2")
    if [ "$size" != $(($3 * $4)) ]; then
        fail "$1" "$size bytes read, not $4 frames of $3: $out"
    elif ! echo "$out" | grep -q "sequence 0 to $(($4 - 1)), 0 missing"; then
        fail "$1" "$out"
    else
        pass "$1 (${out#frame-check: })"
    fi
}

# gen_frames NAME SOURCE C2H_CHANNEL LENGTH COUNT [PATTERN]: frame source SOURCE in GEN mode,
# COUNT frames of LENGTH bytes read from the C2H stream.
gen_frames() {
    user_write $REG_CONTROL $MODE_OFF
    src_setup "$2" "$4" "$6"
    user_write $REG_CLEAR 1
    user_write $REG_CONTROL $((MODE_GEN | CH0_EN << $2))
    read_frames "$3" "$4" "$5" "$TMP/frames"
    read_rc=$?
    # The source stops after the frame in progress; what it made beyond the frames read is
    # read away, so that the next check starts from an empty stream.
    user_write $REG_CONTROL $MODE_GEN
    drain "${DEV}_c2h_$3"
    user_write $REG_CONTROL $MODE_OFF
    frames_verdict "GEN $1" "$TMP/frames" "$4" "$5" $read_rc
}

# gen_both LENGTH0 LENGTH1 COUNT: both sources in GEN mode at once, each read on its own C2H
# stream at the same time (source 1 with the PRBS pattern).
gen_both() {
    user_write $REG_CONTROL $MODE_OFF
    src_setup 0 "$1"
    src_setup 1 "$2" 1
    user_write $REG_CLEAR 1
    user_write $REG_CONTROL $((MODE_GEN | CH0_EN | CH0_EN << 1))
    read_frames "$ST_C2H0" "$1" "$3" "$TMP/frames0" &
    reader=$!
    read_frames "$ST_C2H1" "$2" "$3" "$TMP/frames1"
    rc1=$?
    wait $reader
    rc0=$?
    user_write $REG_CONTROL $MODE_GEN
    drain "${DEV}_c2h_$ST_C2H0"
    drain "${DEV}_c2h_$ST_C2H1"
    user_write $REG_CONTROL $MODE_OFF
    frames_verdict "GEN both sources at once: $3 frames of $1 bytes on c2h_$ST_C2H0" "$TMP/frames0" "$1" "$3" $rc0
    frames_verdict "GEN both sources at once: $3 frames of $2 bytes, PRBS, on c2h_$ST_C2H1" "$TMP/frames1" "$2" "$3" $rc1
}

# loop_packet SIZE: SIZE random bytes sent down the H2C stream in LOOP mode come back on
# C2H stream 0 byte for byte, read with dma_from_device -e into a buffer a page larger.
loop_packet() {
    name="LOOP $1 bytes from h2c_$ST_H2C back on c2h_$ST_C2H0"
    dd if=/dev/urandom of="$TMP/in" bs="$1" count=1 2>/dev/null
    rm -f "$TMP/out"
    user_write $REG_CONTROL $MODE_LOOP
    timeout 90 dma_from_device -d "${DEV}_c2h_$ST_C2H0" -e -s $(($1 / 4096 * 4096 + 4096)) -f "$TMP/out" >"$TMP/rlog" 2>&1 &
    reader=$!
    timeout 90 dma_to_device -d "${DEV}_h2c_$ST_H2C" -s "$1" -f "$TMP/in" >"$TMP/wlog" 2>&1
    wrc=$?
    wait $reader
    rrc=$?
    user_write $REG_CONTROL $MODE_OFF
    if [ "$wrc" != 0 ]; then
        fail "$name" "dma_to_device exited with $wrc: $(tr '\n' ' ' <"$TMP/wlog")"
    elif [ "$rrc" != 0 ]; then
        fail "$name" "dma_from_device exited with $rrc: $(tr '\n' ' ' <"$TMP/rlog")"
    elif cmp -s "$TMP/in" "$TMP/out"; then
        pass "$name"
    else
        fail "$name" "$(wc -c <"$TMP/out") bytes came back: $(cmp "$TMP/in" "$TMP/out" 2>&1 | head -1)"
    fi
}

# send_frames FILE LENGTH COUNT: the frames of FILE down the H2C stream, one write each.
send_frames() {
    i=0
    while [ $i -lt "$3" ]; do
        dd if="$1" of="$TMP/one" bs="$2" skip=$i count=1 2>/dev/null
        if ! timeout 60 dma_to_device -d "${DEV}_h2c_$ST_H2C" -s "$2" -f "$TMP/one" >"$TMP/log" 2>&1; then
            echo "frame $i: $(tr '\n' ' ' <"$TMP/log")"
            return 1
        fi
        i=$((i + 1))
    done
}

# CHECK mode: frames built in the guest, sent down the H2C stream one write each, are counted
# good by the card's checker with none bad or missing; then bytes that are no frame count bad.
check_checker() {
    n=6
    len=1000
    name="CHECK $n frames of $len bytes from h2c_$ST_H2C"
    if ! out=$(frame-check --build "$TMP/tx" --frames $n --len $len 2>&1); then
        fail "$name" "$out"
        return
    fi
    user_write $REG_CONTROL $MODE_OFF
    user_write $REG_CLEAR 1
    user_write $REG_CONTROL $MODE_CHECK
    if ! why=$(send_frames "$TMP/tx" $len $n); then
        user_write $REG_CONTROL $MODE_OFF
        fail "$name" "dma_to_device: $why"
        return
    fi
    good=$(user_read $REG_CHK_GOOD)
    bad=$(user_read $REG_CHK_BAD)
    missing=$(user_read $REG_CHK_MISSING)
    if [ "$((good))" = $n ] && [ "$((bad))" = 0 ] && [ "$((missing))" = 0 ]; then
        pass "$name: CHK_GOOD $((good)), CHK_BAD 0, CHK_MISSING 0"
    else
        fail "$name" "CHK_GOOD '$good', CHK_BAD '$bad', CHK_MISSING '$missing'"
    fi
    name="CHECK 500 random bytes from h2c_$ST_H2C count bad"
    dd if=/dev/urandom of="$TMP/junk" bs=500 count=1 2>/dev/null
    if ! why=$(send_frames "$TMP/junk" 500 1); then
        fail "$name" "dma_to_device: $why"
    else
        bad=$(user_read $REG_CHK_BAD)
        good=$(user_read $REG_CHK_GOOD)
        magic=$(user_read $REG_CHK_ERR_MAGIC)
        if [ "$((bad))" = 1 ] && [ "$((good))" = $n ] && [ "$((magic))" = 1 ]; then
            pass "$name: CHK_BAD 1, CHK_ERR_MAGIC 1"
        else
            fail "$name" "CHK_GOOD '$good', CHK_BAD '$bad', CHK_ERR_MAGIC '$magic'"
        fi
    fi
    user_write $REG_CONTROL $MODE_OFF
}

# The driver's failure path: a C2H stream read with nothing on the stream (mode OFF) ends at
# c2h_timeout with an error, the driver aborting the transfer; the card then still works.
check_stream_timeout() {
    name="C2H stream read with no data times out"
    user_write $REG_CONTROL $MODE_OFF
    before=$(dmesg | grep -c 'timed out')
    with_c2h_timeout 2 timeout 60 dma_from_device -d "${DEV}_c2h_$ST_C2H0" -e -s 4096 -f "$TMP/out" >"$TMP/log" 2>&1
    rc=$?
    after=$(dmesg | grep -c 'timed out')
    if [ "$rc" = 0 ]; then
        fail "$name" "dma_from_device reported success: $(tr '\n' ' ' <"$TMP/log")"
    elif [ "$after" -le "$before" ]; then
        fail "$name" "dma_from_device exited with $rc, but the driver logged no timeout"
    else
        pass "$name (dma_from_device exits with $rc; driver: $(dmesg | grep 'timed out' | tail -1 | sed 's/^\[[^]]*\] //'))"
    fi
    gen_frames "4 frames of 4132 bytes on c2h_$ST_C2H0 after the timeout" 0 "$ST_C2H0" 4132 4
}

check_streams() {
    # The channels of s_axis_h2c0, m_axis_c2h0 and m_axis_c2h1.
    case "$VARIANT" in
        stream) ST_H2C=0 ST_C2H0=0 ST_C2H1=1 ;;
        combined) ST_H2C=1 ST_C2H0=1 ST_C2H1=2 ;;
        *) return ;;
    esac
    gen_frames "8 frames of 4132 bytes on c2h_$ST_C2H0" 0 "$ST_C2H0" 4132 8
    gen_frames "8 frames of 1000 bytes, PRBS, on c2h_$ST_C2H0" 0 "$ST_C2H0" 1000 8 1
    gen_frames "16 frames of 64 bytes on c2h_$ST_C2H0" 0 "$ST_C2H0" 64 16
    gen_frames "4 frames of 65536 bytes on c2h_$ST_C2H0" 0 "$ST_C2H0" 65536 4
    gen_frames "8 frames of 1000 bytes on c2h_$ST_C2H1" 1 "$ST_C2H1" 1000 8
    gen_frames "4 frames of 4100 bytes, PRBS, on c2h_$ST_C2H1" 1 "$ST_C2H1" 4100 4 1
    gen_both 4132 2000 8
    for size in 64 4096 4100 65536; do
        loop_packet $size
    done
    check_checker
    check_stream_timeout
}

# perf_engine NAME NODE: the driver's performance ioctls (the vendor's `performance`) run the
# engine on a cyclic chain of 64 KiB descriptors for two seconds; it must stop cleanly with
# some of them done.
perf_engine() {
    out=$(timeout 30 performance -d "${DEV}_$2" -s 65536 -c 1 2>&1)
    iterations=$(echo "$out" | sed -n 's/^perf.iterations = \([0-9]*\)$/\1/p' | tail -1)
    if echo "$out" | grep -q "IOCTL_XDMA_PERF_STOP succesful" && [ "${iterations:-0}" -gt 0 ]; then
        pass "performance ioctl on $1 ($iterations iterations of 64 KiB)"
    else
        fail "performance ioctl on $1" "$(echo "$out" | grep -iE 'ioctl|iterations' | tr '\n' ' ')"
    fi
}

# The performance ioctl on every engine of the card but a stream H2C one, the H2C ones first.
# A stream C2H engine gets 4 KiB frames from its GEN source (the stream C2H engines take the
# sources in order), 20 000 cycles apart so that little is left on the stream when the run
# stops; the source is then stopped and the stream read empty, as the GEN checks do. A stream
# H2C engine is left out: the driver's chain for it has no descriptor with EOP, and the IP model
# sends an H2C stream's bytes a whole packet at a time, so the engine never completes a
# descriptor of it (the ioctl stops it cleanly, 0 iterations done), where the IP itself would
# let the bytes out as they come. (docs/vm.md, "What the IP model implements".)
check_performance() {
    for c in $H2C_MM; do
        perf_engine "H2C$c" "h2c_$c"
    done
    src=0
    for c in $C2H; do
        if has "$C2H_MM" "$c"; then
            perf_engine "C2H$c" "c2h_$c"
            continue
        fi
        user_write $REG_CONTROL $MODE_OFF
        src_setup $src 4096
        user_write "$(hex $((0x104 + src * 0x40)))" 20000
        user_write $REG_CLEAR 1
        user_write $REG_CONTROL $((MODE_GEN | CH0_EN << src))
        perf_engine "C2H$c (stream, GEN source $src)" "c2h_$c"
        user_write $REG_CONTROL $MODE_GEN
        drain "${DEV}_c2h_$c"
        user_write $REG_CONTROL $MODE_OFF
        src=$((src + 1))
    done
}

# The performance ioctl on C2H 0, then the kernel log. The driver's stop clears the engine's
# RUN and frees the page the engine writes on its next line, so the page must see no write
# once the stop's register write has completed (PG195: the engine completes the descriptor it
# is on, then is idle). A late write lands in a page the kernel has handed on (often as a
# page table), which shows as kernel BUG lines and crashing processes a little later: hence
# 50 short processes after the run, each reading the card's ID, and no new BUG, Oops,
# general protection fault or segfault line in the kernel log since the check began.
check_performance_c2h() {
    has "$C2H_MM" 0 || return
    splat='BUG:|Oops|general protection|segfault|stack-protector|Kernel panic'
    before=$(dmesg | grep -cE "$splat")
    out=$(timeout 30 performance -d "${DEV}_c2h_0" -s 4096 -c 1 2>&1)
    iterations=$(echo "$out" | sed -n 's/^perf.iterations = \([0-9]*\)$/\1/p' | tail -1)
    ok=0
    for _ in $(seq 50); do
        [ "$(user_read $REG_ID)" = 0x44415131 ] && ok=$((ok + 1))
    done
    new=$(($(dmesg | grep -cE "$splat") - before))
    name="performance ioctl on C2H0, then 50 processes and a clean kernel log"
    # The kernel log first: a guest whose pages were overwritten crashes the very processes
    # that would judge the ioctl's output.
    if [ "$new" -gt 0 ]; then
        fail "$name" "$new new kernel log lines: $(dmesg | grep -E "$splat" | tail -n "$new" | head -5 | tr '\n' ' ')"
    elif ! echo "$out" | grep -q "IOCTL_XDMA_PERF_STOP succesful" || [ "${iterations:-0}" -le 0 ]; then
        fail "$name" "$(echo "$out" | grep -iE 'ioctl|iterations' | tr '\n' ' ')"
    elif [ "$ok" != 50 ]; then
        fail "$name" "$((50 - ok)) of the 50 processes did not read the ID"
    else
        pass "$name ($iterations iterations of 4 KiB)"
    fi
}

# check_dma_addr_error NAME: ERROR.DMA_ADDR is set; it is cleared for the next check.
check_dma_addr_error() {
    err=$(user_read $REG_ERROR)
    if [ -n "$err" ] && [ $((err & 0x4)) != 0 ]; then
        pass "$1 sets ERROR.DMA_ADDR ($err)"
    else
        fail "$1 sets ERROR.DMA_ADDR" "ERROR reads '$err'"
    fi
    user_write $REG_ERROR 0xf
}

# DMA past the DDR: the card answers DECERR and records ERROR.DMA_ADDR. The driver enables
# the engines' read errors only, so an H2C transfer (the card's write fails) completes as if
# nothing happened, while a C2H one (its read fails) stops the engine with the error. The
# driver then finds no completed descriptor and leaves the transfer to its timeout, so the
# timeout is shortened for that one transfer (the module reads it at every transfer); in poll
# mode its completion thread also waits out its own 10 s poll of the write-back, which delays
# the next transfer by that much. Last,
# since an engine error is the least travelled path; a round trip after it shows the engine
# recovered.
check_dma_outside_ddr() {
    has "$H2C_MM" 0 && has "$C2H_MM" 0 || return
    user_write $REG_ERROR 0xf
    dd if=/dev/urandom of="$TMP/in" bs=4096 count=1 2>/dev/null
    if timeout 60 dma_to_device -d "${DEV}_h2c_0" -a 0x80000000 -s 4096 -f "$TMP/in" >"$TMP/log" 2>&1; then
        pass "H2C past the DDR completes (write errors are not enabled)"
    else
        fail "H2C past the DDR completes (write errors are not enabled)" "$(tr '\n' ' ' <"$TMP/log")"
    fi
    check_dma_addr_error "H2C past the DDR"
    knob=/sys/module/xdma/parameters/c2h_timeout
    saved=$(cat $knob)
    echo 2 >$knob
    if timeout 60 dma_from_device -d "${DEV}_c2h_0" -a 0x80000000 -s 4096 -f "$TMP/out" >"$TMP/log" 2>&1; then
        fail "C2H past the DDR fails" "dma_from_device reported success"
    else
        pass "C2H past the DDR fails"
    fi
    echo "$saved" >$knob
    check_dma_addr_error "C2H past the DDR"
    roundtrip "64 KiB at 0x4000 after the errors" 0x4000 65536
}

# The vendor's test scripts (vendor.sh): check_vendor_scripts.
. /vendor.sh

# The steps, in order. The performance ioctls are last: a C2H engine's run is the one most
# likely to leave the engine, or the guest, in a state the other steps would trip over.
run_checks() {
    check_nodes
    [ -c "${DEV}_user" ] || return
    check_user_registers
    check_identifiers
    check_interrupt_mode
    check_mm
    check_user_interrupt
    check_streams
    check_dma_outside_ddr
    check_vendor_scripts
    check_performance
    check_performance_c2h
}
