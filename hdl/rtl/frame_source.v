/*
 * Frame source: produces frames in the format of docs/frame-format.md on an AXI-Stream
 * master, one 128-bit beat per cycle.
 *
 * Structure: a generator makes one beat per cycle into a three-stage pipeline, which writes a
 * FIFO of FIFO_DEPTH beats; the FIFO's output register drives m_axis. The generator runs at
 * line rate and the FIFO absorbs the bus's backpressure:
 * - stall policy (drop_policy = 0): the generator waits while the FIFO is full; no frame is
 *   lost and the bus only sees the delay.
 * - drop policy (drop_policy = 1): the generator never waits. A frame starts only if the FIFO
 *   has room for all of its beats; otherwise the whole frame is dropped (frames_dropped counts
 *   it), its slot passes as if it had been sent (its beat count in cycles, then the gap), and
 *   its sequence number is used up, so the receiver sees the gap. A frame is never truncated.
 *   Frames longer than FIFO_DEPTH beats can never be sent under this policy.
 *
 * Periodic mode (oneshot = 0): while enable is high, frames follow each other with
 * gap_cycles idle cycles between the last beat of one frame and the first beat of the next
 * (at the generator; with m_axis_tready high the bus shows the same gap), sequence numbers
 * counting up from 0 after reset. Clearing enable stops after the frame in progress.
 *
 * One-shot mode (oneshot = 1, for ECHO): a frame is made only on request. `send` (a pulse,
 * taken while send_ready is high and ignored otherwise) requests one frame carrying send_seq
 * as its sequence number; one-shot frames always use the stall policy and ignore enable and
 * gap_cycles; they leave the periodic sequence counter alone.
 *
 * The timestamp field is the timestamp input in the cycle the source decided to start the
 * frame. A periodic frame's first beat enters the pipeline in the next cycle and reaches the
 * bus 7 cycles after the decision when the bus is ready; a one-shot frame first spends
 * SEED_CYCLES computing its PRBS seed (below), so it reaches the bus SEED_CYCLES + 7 cycles
 * after the request. enable and the frame configuration pass through a register first. frame_len is clamped to 64..65536. Configuration inputs pass through a
 * register and are read when a frame starts (gap_cycles when it ends).
 *
 * Clear (`clear`, a pulse): the source restarts (sequence numbers from 0, counters zero) at a
 * frame boundary of its output, so that no frame is ever cut. Frames it holds that have not
 * started on the bus are discarded, and the one it is generating is generated and discarded
 * too, unless a beat of it has been presented: a frame with a beat on the bus (TVALID once
 * high) is in flight and finishes as the bus takes its remaining beats, however long that
 * takes. `clear_tail` says which happened at the last clear; `clearing` is high until the
 * restart, and no frame starts before it. Counters are zero from the clear on, and the frame
 * that finishes after it is not counted.
 *
 * Pipeline and timing (each stage fits one 4 ns cycle of axi_aclk on a Kintex-7 -2):
 * - Stage A builds a beat: header, counter or PRBS bytes, lanes past the frame's covered bytes
 *   (everything but the CRC trailer) zero.
 * - Stage R moves the frame's bytes k = (4 - frame_len) mod 16 lanes up, so that the last
 *   covered byte ends a beat, with k zero bytes in front of the first one. Every beat the CRC
 *   sees is then a whole 16-byte beat and the CRC update is one flat XOR matrix with no
 *   per-length selection. Stage P computes that update's data part (linear, in four 32-bit
 *   groups), so the loop from crc_reg back to itself only adds the state part. Leading zero bytes change a CRC state by a known
 *   invertible step, so the frame starts from the initial state taken back over k zero bytes
 *   (a table of 16 constants), which the zeros then bring to 32'hffffffff.
 * - Stage C holds the beat as stage A made it while crc_reg takes the CRC over its moved copy;
 *   in the trailer's beat the CRC is then complete, and stage C inserts it (and the bytes
 *   that spill into the next beat) on its way into the FIFO.
 * - The PRBS seed is seed ^ (sequence * 0x9e3779b9): periodic frames keep the product of the
 *   sequence counter in a register (it grows by the constant per frame), one-shot frames
 *   compute it bit-serially in SEED_CYCLES before they start, so no multiplier sits in a
 *   cycle.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_source #
(
    // Width of the AXI-Stream data bus in bits (the frame layout assumes 128)
    parameter DATA_WIDTH = 128,
    // Width of TKEEP
    parameter KEEP_WIDTH = DATA_WIDTH/8,
    // Beats of buffering between the generator and the bus (a power of two); under the drop
    // policy this is the longest frame that can be sent, 4096 beats = 64 KiB
    parameter FIFO_DEPTH = 4096,
    // Deliberate fault for the host test suite's broken-card test (crates/card-tests), 0 in
    // every real build (no fault logic; fault_seq_repeat_en is ignored). When N > 0 the fault
    // logic exists and fault_seq_repeat_en turns it on at run time: the sequence counter then
    // does not advance at every N-th periodic frame since reset, so the frame after it
    // repeats its sequence number
    parameter FAULT_SEQ_REPEAT = 0
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * Restart at a frame boundary (a pulse)
     */
    input  wire                   clear,

    /*
     * Configuration (held stable by the register file)
     */
    input  wire                   enable,
    input  wire [7:0]             channel,
    input  wire [16:0]            frame_len,
    input  wire [31:0]            gap_cycles,
    input  wire                   pattern,
    input  wire [31:0]            seed,
    input  wire                   drop_policy,
    input  wire [63:0]            timestamp,

    /*
     * One-shot requests (ECHO mode)
     */
    input  wire                   oneshot,
    input  wire                   send,
    input  wire [31:0]            send_seq,

    /*
     * AXI-Stream output
     */
    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tlast,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,

    /*
     * Status
     */
    output wire [63:0]            frames_sent,
    output wire [63:0]            frames_dropped,
    output wire                   send_ready,
    output wire                   clearing,
    output wire                   clear_tail,

    /*
     * Deliberate fault enable (FAULT_SEQ_REPEAT builds only; held constant from before reset)
     */
    input  wire                   fault_seq_repeat_en
);

// Frame format constants (docs/frame-format.md).
localparam [31:0] MAGIC = 32'h46514144;
localparam [7:0] VERSION = 8'd1;
localparam [16:0] MIN_LEN = 17'd64;
localparam [16:0] MAX_LEN = 17'h10000;
localparam [31:0] PRBS_SEQ_MULT = 32'h9e3779b9;

localparam FIFO_COUNT_WIDTH = $clog2(FIFO_DEPTH)+1;
// The reflected CRC-32 polynomial, as frame_crc32 uses it.
localparam [31:0] CRC_POLY = 32'hedb88320;
// Cycles a one-shot frame spends computing its PRBS seed: one bit of the sequence number
// each, one to mix the product with the seed and one to load the PRBS state.
localparam SEED_CYCLES = 34;
localparam FIFO_WIDTH = DATA_WIDTH+KEEP_WIDTH+1;

// Generator states.
localparam [2:0]
    STATE_IDLE = 3'd0,
    STATE_FRAME = 3'd1,
    STATE_SKIP = 3'd2,
    STATE_GAP = 3'd3,
    STATE_SEED = 3'd4;

// check configuration
initial begin
    if (DATA_WIDTH != 128) begin
        $error("Error: the frame layout needs DATA_WIDTH = 128 (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH*8 != DATA_WIDTH) begin
        $error("Error: KEEP_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end
    if (FIFO_DEPTH < 8 || (1 << $clog2(FIFO_DEPTH)) != FIFO_DEPTH) begin
        $error("Error: FIFO_DEPTH must be a power of two of at least 8 (instance %m)");
        $finish;
    end
    if (FAULT_SEQ_REPEAT < 0) begin
        $error("Error: FAULT_SEQ_REPEAT must be 0 (no fault) or positive (instance %m)");
        $finish;
    end
end

// Takes a raw CRC state back over `n` zero bytes: the state from which n zero bytes lead to
// `state` (a constant function: it builds the table of initial states at elaboration).
function [31:0] crc_unzeros(input [31:0] state, input integer n);
    integer k;
    reg b;
    begin
        crc_unzeros = state;
        for (k = 0; k < 8 * n; k = k + 1) begin
            // One step is c' = (c >> 1) ^ (c[0] ? POLY : 0); POLY[31] is set, so c[0] = c'[31].
            b = crc_unzeros[31];
            crc_unzeros = ((crc_unzeros ^ (b ? CRC_POLY : 32'd0)) << 1) | {31'd0, b};
        end
    end
endfunction

// Configuration, registered once per cycle so that the clamping and the frame geometry
// derived from it are not in the start path.
reg [3:0] cfg_last_bytes_reg = 4'd0;
reg [12:0] cfg_beats_reg = 13'd4;
reg [12:0] cfg_last_beat_reg = 13'd3;
reg [12:0] cfg_crc_beat_reg = 13'd3;
// FIFO_DEPTH less the frame's beats: a frame fits when the source's occupancy is at most this.
reg [13:0] cfg_room_reg = 14'd0;
reg cfg_gap_le1_reg = 1'b1;
// enable, registered with the rest so that a frame never starts with the configuration of the
// cycle before.
reg cfg_enable_reg = 1'b0;
reg [3:0] cfg_crc_off_reg = 4'd12;
reg [31:0] cfg_payload_len_reg = 32'd28;
reg cfg_gap_zero_reg = 1'b1;

// Generator state.
reg [2:0] state_reg = STATE_IDLE, state_next;
reg [31:0] seq_ctr_reg = 32'd0, seq_ctr_next;
reg [31:0] seq_mult_reg = 32'd0, seq_mult_next;   // seq_ctr_reg * PRBS_SEQ_MULT
// FAULT_SEQ_REPEAT only: periodic frames started with the fault on since the counter last
// held back.
reg [31:0] fault_cnt_reg = 32'd0, fault_cnt_next;
reg [31:0] gap_cnt_reg = 32'd0, gap_cnt_next;
reg [12:0] skip_cnt_reg = 13'd0, skip_cnt_next;
reg send_ready_reg = 1'b0, send_ready_next;
reg [63:0] frames_dropped_reg = 64'd0, frames_dropped_next;
reg [63:0] frames_sent_reg = 64'd0;
// Beats the generator has made that have not left on m_axis: the pipeline, the FIFO and its
// output register. It is at least what the FIFO will hold, so a frame that fits by it fits.
reg [13:0] occ_reg = 14'd0;
reg out_beat_reg = 1'b0;
reg drop_beat_reg = 1'b0;

// Clear: a restart is waiting for the source to empty (clear_pend_reg), and whether the last
// clear found a frame in flight. out_mid_reg: a beat left on the bus and its frame's last has
// not, so the output is inside a frame.
reg clear_pend_reg = 1'b0;
reg clear_tail_reg = 1'b0;
reg out_mid_reg = 1'b0;

// One-shot seeding: the product of the request's sequence number, one bit per cycle.
reg [5:0] seed_cnt_reg = 6'd0, seed_cnt_next;
reg [31:0] seed_acc_reg = 32'd0, seed_acc_next;
reg [31:0] seed_a_reg = 32'd0, seed_a_next;
reg [31:0] seed_m_reg = 32'd0, seed_m_next;
reg [30:0] seed_init_reg = 31'h7fffffff;        // the one-shot frame's PRBS state, once known
// The next periodic frame's PRBS state, from the product kept for the sequence counter.
reg [30:0] cfg_prbs_init_reg = 31'h7fffffff;

// The frame being generated.
reg [3:0] f_crc_off_reg = 4'd12, f_crc_off_next;
reg [3:0] f_move_reg = 4'd4, f_move_next;
reg [3:0] f_last_bytes_reg = 4'd0, f_last_bytes_next;
reg [31:0] f_payload_len_reg = 32'd28, f_payload_len_next;
// Where the generator is in the frame, as registered flags and down-counters, so that no
// 13-bit comparison sits between a register and what it steers.
reg b0_reg = 1'b0, b0_next;                   // beat 0: first header beat
reg b1_reg = 1'b0, b1_next;                   // beat 1: second header beat
reg before_crc_reg = 1'b0, before_crc_next;   // a beat before the trailer's: 16 covered bytes
reg at_crc_reg = 1'b0, at_crc_next;           // the beat where the trailer starts
reg tail_reg = 1'b0, tail_next;               // the beat after it
reg at_last_reg = 1'b0, at_last_next;         // the frame's last beat
reg [12:0] to_crc_reg = 13'd0, to_crc_next;   // beats until the trailer's
reg [12:0] to_last_reg = 13'd0, to_last_next; // beats until the last
reg skip_last_reg = 1'b0, skip_last_next;     // the last cycle of a dropped frame's slot
reg gap_last_reg = 1'b0, gap_last_next;       // the last cycle of the gap
reg [31:0] f_seq_reg = 32'd0, f_seq_next;
reg [63:0] f_ts_reg = 64'd0, f_ts_next;
reg [31:0] f_seed_reg = 32'd0, f_seed_next;
reg f_pattern_reg = 1'b0, f_pattern_next;
reg [7:0] f_channel_reg = 8'd0, f_channel_next;
reg [30:0] prbs_reg = 31'h7fffffff, prbs_next;
reg [31:0] cnt_word_reg = 32'd0, cnt_word_next;

// Stage A: one beat's bytes with the trailer's lanes zero.
reg a_valid_reg = 1'b0, a_valid_next;
reg [DATA_WIDTH-1:0] a_data_reg = {DATA_WIDTH{1'b0}}, a_data_next;
reg [KEEP_WIDTH-1:0] a_keep_reg = {KEEP_WIDTH{1'b0}}, a_keep_next;
reg a_last_reg = 1'b0, a_last_next;
reg a_first_reg = 1'b0, a_first_next;
reg a_covered_reg = 1'b0, a_covered_next;     // the beat has bytes under the CRC
reg a_crc_here_reg = 1'b0, a_crc_here_next;
reg [3:0] a_crc_off_reg = 4'd0, a_crc_off_next;
reg a_crc_tail_reg = 1'b0, a_crc_tail_next;
reg [3:0] a_move_reg = 4'd0, a_move_next;     // k: lanes the CRC's copy moves up

// Stage R: the beat moved up by k lanes for the CRC, and the beat itself.
reg r_valid_reg = 1'b0;
reg [DATA_WIDTH-1:0] r_moved_reg = {DATA_WIDTH{1'b0}};
reg [DATA_WIDTH-1:0] r_data_reg = {DATA_WIDTH{1'b0}};
reg [DATA_WIDTH-1:0] r_prev_reg = {DATA_WIDTH{1'b0}};  // the frame's previous stage-A beat
reg [KEEP_WIDTH-1:0] r_keep_reg = {KEEP_WIDTH{1'b0}};
reg r_last_reg = 1'b0;
reg r_first_reg = 1'b0;
reg r_covered_reg = 1'b0;
reg r_crc_here_reg = 1'b0;
reg [3:0] r_crc_off_reg = 4'd0;
reg r_crc_tail_reg = 1'b0;
reg [31:0] r_init_reg = 32'hffffffff;

// Stage P: the CRC parts of the moved beat, and the beat.
reg p_valid_reg = 1'b0;
reg [31:0] p_part_reg = 32'd0;  // the CRC data part of the moved beat
reg [DATA_WIDTH-1:0] p_data_reg = {DATA_WIDTH{1'b0}};
reg [KEEP_WIDTH-1:0] p_keep_reg = {KEEP_WIDTH{1'b0}};
reg p_last_reg = 1'b0;
reg p_first_reg = 1'b0;
reg p_covered_reg = 1'b0;
reg p_crc_here_reg = 1'b0;
reg [3:0] p_crc_off_reg = 4'd0;
reg p_crc_tail_reg = 1'b0;
reg [31:0] p_init_part_reg = 32'd0;  // the state part of the frame's initial state

// Stage C: the beat on its way into the FIFO, the running CRC over the moved beats, and the
// trailer bytes that spill into the beat after the trailer's.
reg c_valid_reg = 1'b0;
reg [DATA_WIDTH-1:0] c_data_reg = {DATA_WIDTH{1'b0}};
reg [KEEP_WIDTH-1:0] c_keep_reg = {KEEP_WIDTH{1'b0}};
reg c_last_reg = 1'b0;
reg c_crc_here_reg = 1'b0;
reg [3:0] c_crc_off_reg = 4'd0;
reg c_crc_tail_reg = 1'b0;
reg [31:0] crc_reg = 32'hffffffff;
reg [23:0] crc_spill_reg = 24'd0;

// FIFO interface.
wire [FIFO_COUNT_WIDTH-1:0] fifo_count;
wire fifo_s_ready;
wire [FIFO_WIDTH-1:0] fifo_m_data;

// The pipeline moves one stage whenever the FIFO has room; stage C writes it then. Under the
// drop policy a frame starts only with room reserved for all its beats, so this never holds
// it back.
wire ce = fifo_s_ready;

// The frame length a new frame would take, clamped to the legal range.
wire [16:0] len_in = frame_len < MIN_LEN ? MIN_LEN : (frame_len > MAX_LEN ? MAX_LEN : frame_len);
wire [16:0] crc_pos_in = len_in - 17'd4;
wire [16:0] payload_len_in = len_in - 17'd36;
wire [16:0] last_pos_in = len_in - 17'd1;
wire [12:0] last_beat_in = last_pos_in[16:4];

// Payload sources for the current beat.
wire [DATA_WIDTH-1:0] prbs_data;
wire [30:0] prbs_state_after;
wire [DATA_WIDTH-1:0] cnt_data = {cnt_word_reg + 32'd3, cnt_word_reg + 32'd2,
                                  cnt_word_reg + 32'd1, cnt_word_reg};

frame_prbs31 #(
    .DATA_WIDTH(DATA_WIDTH)
)
prbs_inst (
    .state_in(prbs_reg),
    .data(prbs_data),
    .state_out(prbs_state_after)
);

// Between a clear and the restart no frame starts.
wire clear_block = clear || clear_pend_reg;

// A one-shot request is taken while send_ready is high; the frame it starts carries send_seq.
wire start_oneshot = oneshot && send && send_ready_reg && !clear_block;

// The initial PRBS state from the product of the frame's sequence number (bit 31 of the mix
// is not part of the 31-bit state).
function [30:0] prbs_seed(input [30:0] seed_in, input [30:0] product);
    reg [30:0] mix;
    begin
        mix = seed_in ^ product;
        prbs_seed = mix == 31'd0 ? 31'h7fffffff : mix;
    end
endfunction

reg gen_load;
reg slot_end;
reg start_periodic;
reg start_drop;
reg [DATA_WIDTH-1:0] beat_data;
integer i;

always @* begin
    state_next = state_reg;
    seq_ctr_next = seq_ctr_reg;
    seq_mult_next = seq_mult_reg;
    fault_cnt_next = fault_cnt_reg;
    gap_cnt_next = gap_cnt_reg;
    skip_cnt_next = skip_cnt_reg;
    frames_dropped_next = frames_dropped_reg;
    seed_cnt_next = seed_cnt_reg;
    seed_acc_next = seed_acc_reg;
    seed_a_next = seed_a_reg;
    seed_m_next = seed_m_reg;

    b0_next = b0_reg;
    b1_next = b1_reg;
    before_crc_next = before_crc_reg;
    at_crc_next = at_crc_reg;
    tail_next = tail_reg;
    at_last_next = at_last_reg;
    to_crc_next = to_crc_reg;
    to_last_next = to_last_reg;
    skip_last_next = 1'b0;
    gap_last_next = gap_last_reg;
    f_crc_off_next = f_crc_off_reg;
    f_move_next = f_move_reg;
    f_last_bytes_next = f_last_bytes_reg;
    f_payload_len_next = f_payload_len_reg;
    f_seq_next = f_seq_reg;
    f_ts_next = f_ts_reg;
    f_seed_next = f_seed_reg;
    f_pattern_next = f_pattern_reg;
    f_channel_next = f_channel_reg;
    prbs_next = prbs_reg;
    cnt_word_next = cnt_word_reg;

    a_valid_next = a_valid_reg && !ce;
    a_data_next = a_data_reg;
    a_keep_next = a_keep_reg;
    a_last_next = a_last_reg;
    a_first_next = a_first_reg;
    a_covered_next = a_covered_reg;
    a_crc_here_next = a_crc_here_reg;
    a_crc_off_next = a_crc_off_reg;
    a_crc_tail_next = a_crc_tail_reg;
    a_move_next = a_move_reg;

    // Build the current beat of the current frame.
    if (b0_reg) begin
        beat_data = {f_payload_len_reg, f_seq_reg, 8'd0, 7'd0, f_pattern_reg,
                     f_channel_reg, VERSION, MAGIC};
    end else if (b1_reg) begin
        beat_data = {32'd0, f_seed_reg, f_ts_reg};
    end else begin
        beat_data = f_pattern_reg ? prbs_data : cnt_data;
    end
    // Lanes past the covered bytes are zero, so stage C can OR the trailer in.
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (!before_crc_reg && !(at_crc_reg && i < f_crc_off_reg)) begin
            beat_data[8*i +: 8] = 8'd0;
        end
    end

    gen_load = state_reg == STATE_FRAME && (!a_valid_reg || ce);
    slot_end = (gen_load && at_last_reg) || skip_last_reg;

    if (gen_load) begin
        a_valid_next = 1'b1;
        a_data_next = beat_data;
        a_keep_next = (at_last_reg && f_last_bytes_reg != 4'd0)
            ? ({KEEP_WIDTH{1'b1}} >> (5'd16 - {1'b0, f_last_bytes_reg})) : {KEEP_WIDTH{1'b1}};
        a_last_next = at_last_reg;
        a_first_next = b0_reg;
        a_covered_next = before_crc_reg || (at_crc_reg && f_crc_off_reg != 4'd0);
        a_crc_here_next = at_crc_reg;
        a_crc_off_next = f_crc_off_reg;
        a_crc_tail_next = tail_reg;
        a_move_next = f_move_reg;
        b0_next = 1'b0;
        b1_next = b0_reg;
        to_crc_next = to_crc_reg - 13'd1;
        before_crc_next = before_crc_reg && to_crc_reg != 13'd1;
        at_crc_next = to_crc_reg == 13'd1;
        tail_next = at_crc_reg;
        to_last_next = to_last_reg - 13'd1;
        at_last_next = to_last_reg == 13'd1;
        if (!b0_reg && !b1_reg) begin
            prbs_next = prbs_state_after;
            cnt_word_next = cnt_word_reg + 32'd4;
        end
    end

    if (state_reg == STATE_SKIP) begin
        skip_cnt_next = skip_cnt_reg - 13'd1;
        skip_last_next = skip_cnt_reg == 13'd2;
        if (clear_block) begin
            // A dropped frame's slot is only time: a clear ends it.
            state_next = STATE_IDLE;
            skip_last_next = 1'b0;
        end
    end

    // One-shot seeding: one bit of the sequence number per cycle, then the frame.
    if (state_reg == STATE_SEED) begin
        seed_acc_next = seed_acc_reg + (seed_a_reg[0] ? seed_m_reg : 32'd0);
        seed_a_next = {1'b0, seed_a_reg[31:1]};
        seed_m_next = {seed_m_reg[30:0], 1'b0};
        seed_cnt_next = seed_cnt_reg - 6'd1;
        if (seed_cnt_reg == 6'd1) begin
            prbs_next = seed_init_reg;
            state_next = STATE_FRAME;
        end
        if (clear_block) begin
            // A one-shot frame still seeding has not started: a clear drops it.
            state_next = STATE_IDLE;
        end
    end

    // When the slot of a frame ends, go to the gap, or start the next frame at once.
    if (slot_end) begin
        state_next = STATE_IDLE;
        if (!cfg_gap_zero_reg && !oneshot) begin
            state_next = STATE_GAP;
            gap_cnt_next = gap_cycles;
            gap_last_next = cfg_gap_le1_reg;
        end
    end
    if (state_reg == STATE_GAP) begin
        gap_cnt_next = gap_cnt_reg - 32'd1;
        gap_last_next = gap_cnt_reg <= 32'd2;
        if (oneshot || !cfg_enable_reg || clear_block) begin
            state_next = STATE_IDLE;
        end
    end

    start_periodic = cfg_enable_reg && !oneshot && !clear_block && (state_reg == STATE_IDLE
        || (state_reg == STATE_GAP && gap_last_reg)
        || (slot_end && cfg_gap_zero_reg));

    // Room check for the drop policy: everything the generator made that has not left, and
    // the beat it makes now.
    start_drop = start_periodic && drop_policy
        && (gen_load ? occ_reg >= cfg_room_reg : occ_reg > cfg_room_reg);

    if (start_oneshot || start_periodic) begin
        f_crc_off_next = cfg_crc_off_reg;
        f_move_next = 4'd0 - cfg_crc_off_reg;
        f_last_bytes_next = cfg_last_bytes_reg;
        f_payload_len_next = cfg_payload_len_reg;
        b0_next = 1'b1;
        b1_next = 1'b0;
        before_crc_next = 1'b1;
        at_crc_next = 1'b0;
        tail_next = 1'b0;
        at_last_next = 1'b0;
        to_crc_next = cfg_crc_beat_reg;
        to_last_next = cfg_last_beat_reg;
        f_seq_next = start_oneshot ? send_seq : seq_ctr_reg;
        f_ts_next = timestamp;
        f_seed_next = seed;
        f_pattern_next = pattern;
        f_channel_next = channel;
        cnt_word_next = {start_oneshot ? send_seq[15:0] : seq_ctr_reg[15:0], 16'd0};
        if (start_oneshot) begin
            state_next = STATE_SEED;
            seed_cnt_next = SEED_CYCLES[5:0];
            seed_acc_next = 32'd0;
            seed_a_next = send_seq;
            seed_m_next = PRBS_SEQ_MULT;
        end else begin
            prbs_next = cfg_prbs_init_reg;
            seq_ctr_next = seq_ctr_reg + 32'd1;
            seq_mult_next = seq_mult_reg + PRBS_SEQ_MULT;
            // The fault is not the card's logic: its lines stay out of the coverage figures,
            // which only the good card's runs make.
            /* verilator coverage_off */
            if (FAULT_SEQ_REPEAT != 0 && fault_seq_repeat_en) begin
                // The fault: every FAULT_SEQ_REPEAT-th frame leaves the counter (and its
                // multiple) where they were, so the next frame repeats this one's number.
                fault_cnt_next = fault_cnt_reg + 32'd1;
                if (fault_cnt_reg == FAULT_SEQ_REPEAT - 1) begin
                    fault_cnt_next = 32'd0;
                    seq_ctr_next = seq_ctr_reg;
                    seq_mult_next = seq_mult_reg;
                end
            end
            /* verilator coverage_on */
            if (start_drop) begin
                state_next = STATE_SKIP;
                skip_cnt_next = cfg_beats_reg;
                frames_dropped_next = frames_dropped_reg + 64'd1;
            end else begin
                state_next = STATE_FRAME;
            end
        end
    end

    // state_next == STATE_IDLE in one-shot mode, spelt out so that it does not wait for the
    // whole next-state logic.
    send_ready_next = oneshot && !clear_block && ((state_reg == STATE_IDLE && !start_oneshot)
        || slot_end || state_reg == STATE_GAP);
end

/*
 * Stage R: the beat moved k lanes up (the lanes below k take the previous beat's top lanes,
 * or zeros in front of the frame's first beat), and the initial CRC state for that k.
 */
// The trailer starts at lane crc_off of its beat, so k = 16 - crc_off lanes (mod 16) follow
// the last covered byte: k = (4 - frame_len) mod 16, taken with the beat from the frame.
// The moved beat is the top half of {this beat, the previous one} shifted up by k bytes;
// r_prev_reg is zero in front of a frame's first beat.
wire [2*DATA_WIDTH-1:0] move_window = {a_data_reg, r_prev_reg};
reg [DATA_WIDTH-1:0] moved;
reg [31:0] init_for_move;
integer l;

always @* begin
    for (l = 0; l < KEEP_WIDTH; l = l + 1) begin
        case (a_move_reg)
            4'd0: moved[8*l +: 8] = move_window[8*(l + 16) +: 8];
            4'd1: moved[8*l +: 8] = move_window[8*(l + 15) +: 8];
            4'd2: moved[8*l +: 8] = move_window[8*(l + 14) +: 8];
            4'd3: moved[8*l +: 8] = move_window[8*(l + 13) +: 8];
            4'd4: moved[8*l +: 8] = move_window[8*(l + 12) +: 8];
            4'd5: moved[8*l +: 8] = move_window[8*(l + 11) +: 8];
            4'd6: moved[8*l +: 8] = move_window[8*(l + 10) +: 8];
            4'd7: moved[8*l +: 8] = move_window[8*(l + 9) +: 8];
            4'd8: moved[8*l +: 8] = move_window[8*(l + 8) +: 8];
            4'd9: moved[8*l +: 8] = move_window[8*(l + 7) +: 8];
            4'd10: moved[8*l +: 8] = move_window[8*(l + 6) +: 8];
            4'd11: moved[8*l +: 8] = move_window[8*(l + 5) +: 8];
            4'd12: moved[8*l +: 8] = move_window[8*(l + 4) +: 8];
            4'd13: moved[8*l +: 8] = move_window[8*(l + 3) +: 8];
            4'd14: moved[8*l +: 8] = move_window[8*(l + 2) +: 8];
            default: moved[8*l +: 8] = move_window[8*(l + 1) +: 8];
        endcase
    end
    init_for_move = 32'hffffffff;
    for (l = 1; l < KEEP_WIDTH; l = l + 1) begin
        if ({28'd0, a_move_reg} == l) begin
            init_for_move = crc_unzeros(32'hffffffff, l);
        end
    end
end

/*
 * Stage C: the CRC over the moved beat completed, and the trailer inserted where the frame
 * puts it.
 */
// The CRC update is linear: F(state, moved) = F(state, 0) ^ F(0, moved), and F(0, moved) is
// the XOR of F(0, one 32-bit group of moved) over its four groups (each an XOR of at most 32
// bits, so no 128-input XOR tree is built). Stage P computes the data part, stage C adds the
// state part (over the state bits alone: STATE_ONLY), so the loop from crc_reg back to itself
// is an XOR of about 17 bits.
localparam GROUPS = DATA_WIDTH / 32;

wire [32*GROUPS-1:0] group_parts;
wire [31:0] state_part;
wire [31:0] init_part;

genvar gp;
generate
    for (gp = 0; gp < GROUPS; gp = gp + 1) begin : group_g
        frame_crc32 #(
            .DATA_WIDTH(DATA_WIDTH)
        )
        crc_group_inst (
            .state_in(32'd0),
            .data(r_moved_reg & ({{DATA_WIDTH-32{1'b0}}, 32'hffffffff} << (32 * gp))),
            .state_out(group_parts[32*gp +: 32])
        );
    end
endgenerate

frame_crc32 #(
    .DATA_WIDTH(DATA_WIDTH),
    .STATE_ONLY(1)
)
crc_state_inst (
    .state_in(crc_reg),
    .data({DATA_WIDTH{1'b0}}),
    .state_out(state_part)
);

// A frame's first beat starts from its initial state, whose part stage P computes.
frame_crc32 #(
    .DATA_WIDTH(DATA_WIDTH),
    .STATE_ONLY(1)
)
crc_init_inst (
    .state_in(r_init_reg),
    .data({DATA_WIDTH{1'b0}}),
    .state_out(init_part)
);

// The data part of the moved beat: the XOR of its group parts.
reg [31:0] data_part;
integer q;

always @* begin
    data_part = 32'd0;
    for (q = 0; q < GROUPS; q = q + 1) begin
        data_part = data_part ^ group_parts[32*q +: 32];
    end
end

wire [31:0] crc_out = (p_first_reg ? p_init_part_reg : state_part) ^ p_part_reg;

wire [31:0] crc_final = ~crc_reg;
wire [DATA_WIDTH+31:0] crc_shifted = {{DATA_WIDTH{1'b0}}, crc_final} << {c_crc_off_reg, 3'b000};
wire [DATA_WIDTH-1:0] c_out_data = c_data_reg
    | (c_crc_here_reg ? crc_shifted[DATA_WIDTH-1:0] : {DATA_WIDTH{1'b0}})
    | (c_crc_tail_reg ? {{DATA_WIDTH-24{1'b0}}, crc_spill_reg} : {DATA_WIDTH{1'b0}});

// The trailer bytes shifted past any beat are not needed, the top bits of the PRBS mix are
// not part of the 31-bit state, the low bits of the last byte's position are the lane, and
// the drop policy counts with occ_reg rather than the FIFO's own count; a build without the
// fault logic ignores its enable.
wire unused_bits = &{1'b0, crc_shifted[DATA_WIDTH+24 +: 8], seed[31], seq_mult_reg[31],
    seed_acc_reg[31], f_seed_reg[31], last_pos_in[3:0], fault_seq_repeat_en, 1'b0};

// Whether the last word that reached the output register ended its frame: the word there, or
// the last one the bus took. A word after it starts a frame, which a clear may discard.
wire out_at_boundary = m_axis_tvalid ? m_axis_tlast : !out_mid_reg;
// The FIFO drops its words while the clear blocks, unless a frame has begun on the bus: a
// word held on the bus is looked at inside the FIFO (its last bit), so that no logic from
// the FIFO's memory output reaches its read side here. fifo_discard is what it does.
wire fifo_drop = clear_block && (m_axis_tvalid || !out_mid_reg);
wire fifo_discard = clear_block && out_at_boundary;
// The source is empty once a clear has had its effect: nothing generated, nothing held.
wire clear_quiet = state_reg == STATE_IDLE && !a_valid_reg && !r_valid_reg && !p_valid_reg
    && !c_valid_reg && fifo_count == {FIFO_COUNT_WIDTH{1'b0}} && !m_axis_tvalid;

always @(posedge clk) begin
    cfg_last_bytes_reg <= len_in[3:0];
    cfg_beats_reg <= len_in[16:4] + {12'd0, len_in[3:0] != 4'd0};
    cfg_last_beat_reg <= last_beat_in;
    cfg_room_reg <= FIFO_DEPTH[13:0] - 14'd1 - {1'b0, last_beat_in};
    cfg_enable_reg <= enable;
    cfg_prbs_init_reg <= prbs_seed(seed[30:0], seq_mult_reg[30:0]);
    seed_init_reg <= prbs_seed(f_seed_reg[30:0], seed_acc_reg[30:0]);
    cfg_gap_le1_reg <= gap_cycles <= 32'd1;
    cfg_crc_beat_reg <= crc_pos_in[16:4];
    cfg_crc_off_reg <= crc_pos_in[3:0];
    cfg_payload_len_reg <= {15'd0, payload_len_in};
    cfg_gap_zero_reg <= gap_cycles == 32'd0;

    state_reg <= state_next;
    seq_ctr_reg <= seq_ctr_next;
    seq_mult_reg <= seq_mult_next;
    fault_cnt_reg <= fault_cnt_next;
    gap_cnt_reg <= gap_cnt_next;
    skip_cnt_reg <= skip_cnt_next;
    send_ready_reg <= send_ready_next;
    frames_dropped_reg <= frames_dropped_next;
    seed_cnt_reg <= seed_cnt_next;
    seed_acc_reg <= seed_acc_next;
    seed_a_reg <= seed_a_next;
    seed_m_reg <= seed_m_next;

    b0_reg <= b0_next;
    b1_reg <= b1_next;
    before_crc_reg <= before_crc_next;
    at_crc_reg <= at_crc_next;
    tail_reg <= tail_next;
    at_last_reg <= at_last_next;
    to_crc_reg <= to_crc_next;
    to_last_reg <= to_last_next;
    skip_last_reg <= skip_last_next;
    gap_last_reg <= gap_last_next;
    f_crc_off_reg <= f_crc_off_next;
    f_move_reg <= f_move_next;
    f_last_bytes_reg <= f_last_bytes_next;
    f_payload_len_reg <= f_payload_len_next;
    f_seq_reg <= f_seq_next;
    f_ts_reg <= f_ts_next;
    f_seed_reg <= f_seed_next;
    f_pattern_reg <= f_pattern_next;
    f_channel_reg <= f_channel_next;
    prbs_reg <= prbs_next;
    cnt_word_reg <= cnt_word_next;

    a_valid_reg <= a_valid_next;
    a_data_reg <= a_data_next;
    a_keep_reg <= a_keep_next;
    a_last_reg <= a_last_next;
    a_first_reg <= a_first_next;
    a_covered_reg <= a_covered_next;
    a_crc_here_reg <= a_crc_here_next;
    a_crc_off_reg <= a_crc_off_next;
    a_crc_tail_reg <= a_crc_tail_next;
    a_move_reg <= a_move_next;

    if (ce) begin
        // Stage A -> R.
        r_valid_reg <= a_valid_reg;
        if (a_valid_reg) begin
            r_moved_reg <= moved;
            r_data_reg <= a_data_reg;
            r_prev_reg <= a_last_reg ? {DATA_WIDTH{1'b0}} : a_data_reg;
            r_keep_reg <= a_keep_reg;
            r_last_reg <= a_last_reg;
            r_first_reg <= a_first_reg;
            r_covered_reg <= a_covered_reg;
            r_crc_here_reg <= a_crc_here_reg;
            r_crc_off_reg <= a_crc_off_reg;
            r_crc_tail_reg <= a_crc_tail_reg;
            r_init_reg <= init_for_move;
        end

        // Stage R -> P, the moved beat's CRC parts.
        p_valid_reg <= r_valid_reg;
        if (r_valid_reg) begin
            p_part_reg <= data_part;
            p_data_reg <= r_data_reg;
            p_keep_reg <= r_keep_reg;
            p_last_reg <= r_last_reg;
            p_first_reg <= r_first_reg;
            p_covered_reg <= r_covered_reg;
            p_crc_here_reg <= r_crc_here_reg;
            p_crc_off_reg <= r_crc_off_reg;
            p_crc_tail_reg <= r_crc_tail_reg;
            p_init_part_reg <= init_part;
        end

        // Stage P -> C, the CRC over the moved beat.
        c_valid_reg <= p_valid_reg;
        if (p_valid_reg) begin
            c_data_reg <= p_data_reg;
            c_keep_reg <= p_keep_reg;
            c_last_reg <= p_last_reg;
            c_crc_here_reg <= p_crc_here_reg;
            c_crc_off_reg <= p_crc_off_reg;
            c_crc_tail_reg <= p_crc_tail_reg;
            if (p_covered_reg) begin
                crc_reg <= crc_out;
            end
        end

        if (c_valid_reg && c_crc_here_reg) begin
            // The trailer bytes that did not fit in this beat move to lane 0 of the next.
            crc_spill_reg <= crc_shifted[DATA_WIDTH +: 24];
        end
    end

    if (m_axis_tvalid && m_axis_tready && m_axis_tlast && !clear_block) begin
        frames_sent_reg <= frames_sent_reg + 64'd1;
    end
    if (m_axis_tvalid && m_axis_tready) begin
        out_mid_reg <= !m_axis_tlast;
    end
    // A beat that left, on the bus or discarded, is counted a cycle later (occ_reg then
    // overstates by two at most, which only makes the room check stricter), so the bus's
    // TREADY is not in its path.
    out_beat_reg <= m_axis_tvalid && m_axis_tready;
    drop_beat_reg <= fifo_discard && fifo_count != {FIFO_COUNT_WIDTH{1'b0}};
    occ_reg <= occ_reg + {13'd0, gen_load} - {13'd0, out_beat_reg} - {13'd0, drop_beat_reg};

    if (clear) begin
        // The new run's counters and sequence start now; no frame can start before the
        // restart, and the one that may finish meanwhile is not counted.
        clear_pend_reg <= 1'b1;
        clear_tail_reg <= !out_at_boundary || (m_axis_tvalid && !m_axis_tready);
        seq_ctr_reg <= 32'd0;
        seq_mult_reg <= 32'd0;
        fault_cnt_reg <= 32'd0;
        frames_dropped_reg <= 64'd0;
        frames_sent_reg <= 64'd0;
    end else if (clear_pend_reg && clear_quiet) begin
        clear_pend_reg <= 1'b0;
    end

    if (rst) begin
        state_reg <= STATE_IDLE;
        seq_ctr_reg <= 32'd0;
        seq_mult_reg <= 32'd0;
        fault_cnt_reg <= 32'd0;
        gap_cnt_reg <= 32'd0;
        skip_cnt_reg <= 13'd0;
        send_ready_reg <= 1'b0;
        frames_dropped_reg <= 64'd0;
        frames_sent_reg <= 64'd0;
        seed_cnt_reg <= 6'd0;
        skip_last_reg <= 1'b0;
        occ_reg <= 14'd0;
        out_beat_reg <= 1'b0;
        drop_beat_reg <= 1'b0;
        clear_pend_reg <= 1'b0;
        clear_tail_reg <= 1'b0;
        out_mid_reg <= 1'b0;
        a_valid_reg <= 1'b0;
        r_valid_reg <= 1'b0;
        r_prev_reg <= {DATA_WIDTH{1'b0}};
        p_valid_reg <= 1'b0;
        c_valid_reg <= 1'b0;
    end
end

frame_source_fifo #(
    .WIDTH(FIFO_WIDTH),
    .DEPTH(FIFO_DEPTH),
    .COUNT_WIDTH(FIFO_COUNT_WIDTH),
    .LAST_BIT(FIFO_WIDTH-1)
)
fifo_inst (
    .clk(clk),
    .rst(rst),
    .s_data({c_last_reg, c_keep_reg, c_out_data}),
    .s_valid(c_valid_reg),
    .s_ready(fifo_s_ready),
    .m_data(fifo_m_data),
    .m_valid(m_axis_tvalid),
    .m_ready(m_axis_tready),
    .drop(fifo_drop),
    .count(fifo_count)
);

assign m_axis_tdata = fifo_m_data[DATA_WIDTH-1:0];
assign m_axis_tkeep = fifo_m_data[DATA_WIDTH +: KEEP_WIDTH];
assign m_axis_tlast = fifo_m_data[DATA_WIDTH+KEEP_WIDTH];
assign frames_sent = frames_sent_reg;
assign frames_dropped = frames_dropped_reg;
assign send_ready = send_ready_reg;
assign clearing = clear_pend_reg;
assign clear_tail = clear_tail_reg;

endmodule

`resetall
