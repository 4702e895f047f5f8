/*
 * Frame checker: verifies the frames of docs/frame-format.md arriving on an AXI-Stream slave
 * and counts them.
 *
 * Checks per frame: magic, format version, length (bytes received against the header's
 * payload length, within 64..65536, TKEEP all ones except on the TLAST beat, which keeps its
 * bytes from lane 0 up) and CRC-32 (run over every byte received, trailer included, and
 * compared with the CRC-32 residue, so the checker need not know where the trailer is). A
 * frame with any fault counts once in frames_bad and once in each per-kind counter that
 * applies; the payload pattern is not checked here (the CRC covers corruption).
 *
 * Sequence continuity: only good frames are trusted for their sequence number. Between two
 * good frames, a forward jump of d counts d minus the bad frames received in between as
 * missing, so a lost frame is counted either bad or missing, never both. A backward jump
 * (d >= 2^31: a repeat or a restarted source) restarts tracking without counting. The first
 * good frame after reset or clear only sets the expected number.
 *
 * The checker is always ready: s_axis_tready is constantly high, and it takes one beat per
 * cycle, also for back-to-back frames of one beat.
 *
 * Timing: counters, last_seq and the frame_done pulse (with frame_seq and frame_ok) update four
 * cycles after the TLAST beat's handshake (stage 1 takes the beat, stage 1b completes its CRC,
 * stage 2 judges length and CRC, stage 3 counts), frames_missing two cycles after the others, so that each step fits
 * one 4 ns cycle of axi_aclk. A clear in the same cycle as a counter update wins, and it
 * also drops a missing count still on its way.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_checker #
(
    // Width of the AXI-Stream data bus in bits (the frame layout assumes 128)
    parameter DATA_WIDTH = 128,
    // Width of TKEEP
    parameter KEEP_WIDTH = DATA_WIDTH/8
)
(
    input  wire                   clk,
    input  wire                   rst,
    input  wire                   clear,

    /*
     * AXI-Stream input
     */
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tlast,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,

    /*
     * Counters
     */
    output wire [63:0]            frames_good,
    output wire [63:0]            frames_bad,
    output wire [63:0]            frames_missing,
    output wire [31:0]            err_magic,
    output wire [31:0]            err_length,
    output wire [31:0]            err_crc,
    output wire [31:0]            err_version,
    output wire [31:0]            last_seq,

    /*
     * Per-frame result (ECHO mode)
     */
    output wire                   frame_done,
    output wire [31:0]            frame_seq,
    output wire                   frame_ok
);

// Frame format constants (docs/frame-format.md).
localparam [31:0] MAGIC = 32'h46514144;
localparam [7:0] VERSION = 8'd1;
// A frame is 64 to 65536 bytes; stage 1b and stage 2 check the bounds in terms of beats
// (see length_err).
// The raw CRC register after a frame and its own trailer (the inverse of 0x2144df1c).
localparam [31:0] CRC_RESIDUE_RAW = 32'hdebb20e3;
// The reflected CRC-32 polynomial, as frame_crc32 uses it.
localparam [31:0] CRC_POLY = 32'hedb88320;

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
end

// Advances a raw CRC state over `n` zero bytes (a constant function: it builds the residue
// table below at elaboration).
function [31:0] crc_zeros(input [31:0] state, input integer n);
    integer k;
    begin
        crc_zeros = state;
        for (k = 0; k < 8 * n; k = k + 1) begin
            crc_zeros = {1'b0, crc_zeros[31:1]} ^ (crc_zeros[0] ? CRC_POLY : 32'd0);
        end
    end
endfunction

// Stage 1: the frame being received.
reg in_frame_reg = 1'b0;
reg [12:0] beats_reg = 13'd0;        // beats of the frame before the current one, saturating
reg keep_err_reg = 1'b0;
reg magic_ok_reg = 1'b0;
reg version_ok_reg = 1'b0;
reg [31:0] seq_reg = 32'd0;
reg [32:0] exp_len_reg = 33'd0;      // the header's payload length + 36
reg [31:0] crc_reg = 32'hffffffff;

// Stage 1 -> 1b: the beat's CRC data part (the CRC of its kept bytes from a zero state), and
// the results of a TLAST beat, which wait here for crc_reg to take the beat.
reg d_valid_reg = 1'b0;
reg d_first_reg = 1'b0;
reg [32*(DATA_WIDTH/32)-1:0] d_parts_reg = {32*(DATA_WIDTH/32){1'b0}};
reg t_valid_reg = 1'b0;
reg t_magic_err_reg = 1'b0;
reg t_version_err_reg = 1'b0;
reg t_keep_err_reg = 1'b0;
reg [12:0] t_full_beats_reg = 13'd0;
reg [KEEP_WIDTH-1:0] t_last_lane_reg = {KEEP_WIDTH{1'b0}};
reg [4:0] t_last_bytes_reg = 5'd0;
reg [32:0] t_exp_len_reg = 33'd0;
reg [31:0] t_seq_reg = 32'd0;

// Stage 1b -> 2: a frame that just ended, before its length and CRC are judged.
reg e_valid_reg = 1'b0;
reg e_magic_err_reg = 1'b0;
reg e_version_err_reg = 1'b0;
reg e_keep_err_reg = 1'b0;
reg e_too_long_reg = 1'b0;            // 4096 beats or more before the last
reg e_too_short_reg = 1'b0;           // fewer than 64 bytes
reg e_exp_high_reg = 1'b0;            // the header's length + 36 needs more than 18 bits
reg [17:0] e_bytes_reg = 18'd0;        // bytes received
reg [KEEP_WIDTH-1:0] e_last_lane_reg = {KEEP_WIDTH{1'b0}};
reg [17:0] e_exp_len_reg = 18'd0;         // its low 18 bits
reg [31:0] e_seq_reg = 32'd0;

// Stage 2 -> 3: the verdict.
reg v_valid_reg = 1'b0;
reg v_magic_err_reg = 1'b0;
reg v_version_err_reg = 1'b0;
reg v_length_err_reg = 1'b0;
reg [KEEP_WIDTH-1:0] v_crc_match_reg = {KEEP_WIDTH{1'b0}};  // one bit set when the CRC is good
reg [31:0] v_seq_reg = 32'd0;

// Stage 3: counters and sequence tracking.
reg [63:0] frames_good_reg = 64'd0;
reg [63:0] frames_bad_reg = 64'd0;
reg [63:0] frames_missing_reg = 64'd0;
reg [31:0] err_magic_reg = 32'd0;
reg [31:0] err_length_reg = 32'd0;
reg [31:0] err_crc_reg = 32'd0;
reg [31:0] err_version_reg = 32'd0;
reg [31:0] last_seq_reg = 32'd0;
reg have_expected_reg = 1'b0;
reg [31:0] expected_reg = 32'd0;
reg [31:0] bad_since_good_reg = 32'd0;
reg frame_done_reg = 1'b0;
reg [31:0] frame_seq_reg = 32'd0;
reg frame_ok_reg = 1'b0;
reg m_valid_reg = 1'b0;              // a good frame whose jump is being counted
reg [31:0] m_delta_reg = 32'd0;
reg [31:0] m_bad_reg = 32'd0;
reg [31:0] missing_inc_reg = 32'd0;

assign s_axis_tready = 1'b1;

/*
 * Stage 1: one beat per cycle. The CRC runs over all 16 lanes of every beat with the lanes
 * that TKEEP leaves out forced to zero, so its update is one flat XOR matrix. Only the last beat has such lanes, and zeros after a frame's end advance the
 * CRC state by a fixed linear step; stage 2 therefore compares the state with the residue
 * advanced over as many zero bytes as the last beat lacks (a table of 16 constants), which is
 * the same as checking the residue after the frame's real last byte.
 */
wire first = !in_frame_reg;

// TKEEP rule: all ones, except on the TLAST beat, which keeps a run of bytes from lane 0.
wire keep_all = &s_axis_tkeep;
wire keep_run = s_axis_tkeep[0] && &(~s_axis_tkeep[KEEP_WIDTH-1:1] | s_axis_tkeep[KEEP_WIDTH-2:0]);
wire keep_bad = s_axis_tlast ? !keep_run : !keep_all;

reg [DATA_WIDTH-1:0] data_kept;
integer i;

always @* begin
    for (i = 0; i < DATA_WIDTH; i = i + 1) begin
        data_kept[i] = s_axis_tdata[i] && s_axis_tkeep[i / 8];
    end
end

wire magic_ok = first ? s_axis_tdata[31:0] == MAGIC : magic_ok_reg;
wire version_ok = first ? s_axis_tdata[39:32] == VERSION : version_ok_reg;
wire [31:0] seq = first ? s_axis_tdata[95:64] : seq_reg;
wire [32:0] exp_len = first ? {1'b0, s_axis_tdata[127:96]} + 33'd36 : exp_len_reg;
wire [12:0] beats_before = first ? 13'd0 : beats_reg;
wire keep_err = (!first && keep_err_reg) || keep_bad;

// The CRC update is linear: F(state, data) = F(state, 0) ^ F(0, data), and F(0, data) is the
// XOR of F(0, one 32-bit group of data) over the beat's four groups. Stage 1 computes the four
// group parts of each beat (each an XOR over at most 32 data bits, from the stream's
// registers), stage 1b adds them and the state part (an XOR over 32 bits), so neither the
// beat's 128 bits nor the loop from crc_reg back to itself sit in one long XOR tree.
localparam GROUPS = DATA_WIDTH / 32;

wire [32*GROUPS-1:0] group_parts;
wire [31:0] state_part;

genvar gp;
generate
    for (gp = 0; gp < GROUPS; gp = gp + 1) begin : group_g
        frame_crc32 #(
            .DATA_WIDTH(DATA_WIDTH)
        )
        crc_group_inst (
            .state_in(32'd0),
            .data(data_kept & ({{DATA_WIDTH-32{1'b0}}, 32'hffffffff} << (32 * gp))),
            .state_out(group_parts[32*gp +: 32])
        );
    end
endgenerate

// The state part over the state bits alone, and the frame's first beat's (the initial state
// advanced over a beat) as a constant chosen after it: the loop from crc_reg back to itself is
// the state-only matrix and one gate.
frame_crc32 #(
    .DATA_WIDTH(DATA_WIDTH),
    .STATE_ONLY(1)
)
crc_state_inst (
    .state_in(crc_reg),
    .data({DATA_WIDTH{1'b0}}),
    .state_out(state_part)
);

localparam [31:0] CRC_INIT_PART = crc_zeros(32'hffffffff, KEEP_WIDTH);

reg [31:0] data_part;
integer q;

always @* begin
    data_part = 32'd0;
    for (q = 0; q < GROUPS; q = q + 1) begin
        data_part = data_part ^ d_parts_reg[32*q +: 32];
    end
end

/*
 * Stage 2: length and CRC of the frame that ended, from stage 1b's registers (crc_reg still
 * holds the frame's state in this cycle, whatever the next frame's first beat does to it).
 */
// One-hot position of the last kept lane, for a TKEEP that is a run from lane 0, and the
// number of bytes that makes (both taken in stage 1 from the TLAST beat's TKEEP).
wire [KEEP_WIDTH-1:0] last_lane = s_axis_tkeep & ~{1'b0, s_axis_tkeep[KEEP_WIDTH-1:1]};
wire [4:0] last_bytes;

// The residue advanced over the zero bytes after n kept bytes, compared per n in parallel.
wire [KEEP_WIDTH-1:0] crc_match;

genvar g;
generate
    for (g = 0; g < 5; g = g + 1) begin : count_g
        // Bit g of the byte count n = lane + 1, as an OR over the lanes whose n has it.
        wire [KEEP_WIDTH-1:0] lanes_with_bit;
        genvar h;
        for (h = 0; h < KEEP_WIDTH; h = h + 1) begin : lane_g
            assign lanes_with_bit[h] = ((h + 1) >> g) % 2 == 1;
        end
        assign last_bytes[g] = |(last_lane & lanes_with_bit);
    end
    for (g = 0; g < KEEP_WIDTH; g = g + 1) begin : residue_g
        localparam [31:0] RESIDUE = crc_zeros(CRC_RESIDUE_RAW, KEEP_WIDTH - 1 - g);
        assign crc_match[g] = e_last_lane_reg[g] && crc_reg == RESIDUE;
    end
endgenerate

// A frame of 4096 beats or more before its last is too long whatever that beat holds, and
// one of fewer is at most 4095 * 16 + 16 = 65536 bytes, so that flag is the whole upper
// bound. The lower bound and the high bits of the expected length are flags from stage 1b
// too, so that this stage compares 18 bits and ORs the flags.
wire length_err = e_keep_err_reg || e_too_long_reg || e_too_short_reg || e_exp_high_reg
    || e_bytes_reg != e_exp_len_reg;

// Missing frames, in two more steps that each fit a cycle: stage 3 takes the jump from the
// expected number and the bad frames seen since the last good one; the next cycle subtracts
// them (a lost frame counts as bad or as missing, never both) and the one after adds the
// result to the counter.
wire [31:0] seq_delta = v_seq_reg - expected_reg;
wire [32:0] gap_left = {1'b0, m_delta_reg} - {1'b0, m_bad_reg};
wire v_crc_err = !(|v_crc_match_reg);
wire v_bad = v_magic_err_reg || v_version_err_reg || v_length_err_reg || v_crc_err;

always @(posedge clk) begin
    d_valid_reg <= 1'b0;
    t_valid_reg <= 1'b0;
    e_valid_reg <= 1'b0;
    v_valid_reg <= 1'b0;
    frame_done_reg <= 1'b0;
    m_valid_reg <= 1'b0;
    missing_inc_reg <= 32'd0;

    if (m_valid_reg && !gap_left[32]) begin
        missing_inc_reg <= gap_left[31:0];
    end
    frames_missing_reg <= frames_missing_reg + {32'd0, missing_inc_reg};

    if (s_axis_tvalid) begin
        in_frame_reg <= !s_axis_tlast;
        beats_reg <= beats_before == 13'h1fff ? beats_before : beats_before + 13'd1;
        keep_err_reg <= keep_err;
        magic_ok_reg <= magic_ok;
        version_ok_reg <= version_ok;
        seq_reg <= seq;
        exp_len_reg <= exp_len;
        d_valid_reg <= 1'b1;
        d_first_reg <= first;
        d_parts_reg <= group_parts;

        if (s_axis_tlast) begin
            t_valid_reg <= 1'b1;
            t_magic_err_reg <= !magic_ok;
            t_version_err_reg <= !version_ok;
            t_keep_err_reg <= keep_err;
            t_full_beats_reg <= beats_before;
            t_last_lane_reg <= last_lane;
            t_last_bytes_reg <= last_bytes;
            t_exp_len_reg <= exp_len;
            t_seq_reg <= seq;
        end
    end

    // Stage 1b: the beat's CRC, and the frame's results move on with it.
    if (d_valid_reg) begin
        crc_reg <= (d_first_reg ? CRC_INIT_PART : state_part) ^ data_part;
    end
    if (t_valid_reg) begin
        e_valid_reg <= 1'b1;
        e_magic_err_reg <= t_magic_err_reg;
        e_version_err_reg <= t_version_err_reg;
        e_keep_err_reg <= t_keep_err_reg;
        e_too_long_reg <= t_full_beats_reg >= 13'd4096;
        // 16 * beats + bytes < 64: fewer than 3 full beats, or 3 and a partial one.
        e_too_short_reg <= t_full_beats_reg < 13'd3
            || (t_full_beats_reg == 13'd3 && t_last_bytes_reg < 5'd16);
        e_exp_high_reg <= |t_exp_len_reg[32:18];
        e_bytes_reg <= {1'b0, t_full_beats_reg[12:0], 4'd0} + {13'd0, t_last_bytes_reg};
        e_last_lane_reg <= t_last_lane_reg;
        e_exp_len_reg <= t_exp_len_reg[17:0];
        e_seq_reg <= t_seq_reg;
    end

    if (e_valid_reg) begin
        v_valid_reg <= 1'b1;
        v_magic_err_reg <= e_magic_err_reg;
        v_version_err_reg <= e_version_err_reg;
        v_length_err_reg <= length_err;
        v_crc_match_reg <= crc_match;
        v_seq_reg <= e_seq_reg;
    end

    if (v_valid_reg) begin
        frame_done_reg <= 1'b1;
        frame_seq_reg <= v_seq_reg;
        frame_ok_reg <= !v_bad;
        last_seq_reg <= v_seq_reg;
        if (v_magic_err_reg) begin
            err_magic_reg <= err_magic_reg + 32'd1;
        end
        if (v_version_err_reg) begin
            err_version_reg <= err_version_reg + 32'd1;
        end
        if (v_length_err_reg) begin
            err_length_reg <= err_length_reg + 32'd1;
        end
        if (v_crc_err) begin
            err_crc_reg <= err_crc_reg + 32'd1;
        end
        if (v_bad) begin
            frames_bad_reg <= frames_bad_reg + 64'd1;
            if (bad_since_good_reg != 32'hffffffff) begin
                bad_since_good_reg <= bad_since_good_reg + 32'd1;
            end
        end else begin
            frames_good_reg <= frames_good_reg + 64'd1;
            m_valid_reg <= have_expected_reg && !seq_delta[31];
            m_delta_reg <= seq_delta;
            m_bad_reg <= bad_since_good_reg;
            have_expected_reg <= 1'b1;
            expected_reg <= v_seq_reg + 32'd1;
            bad_since_good_reg <= 32'd0;
        end
    end

    if (clear) begin
        m_valid_reg <= 1'b0;
        missing_inc_reg <= 32'd0;
        frames_good_reg <= 64'd0;
        frames_bad_reg <= 64'd0;
        frames_missing_reg <= 64'd0;
        err_magic_reg <= 32'd0;
        err_length_reg <= 32'd0;
        err_crc_reg <= 32'd0;
        err_version_reg <= 32'd0;
        have_expected_reg <= 1'b0;
        bad_since_good_reg <= 32'd0;
    end

    if (rst) begin
        in_frame_reg <= 1'b0;
        d_valid_reg <= 1'b0;
        t_valid_reg <= 1'b0;
        e_valid_reg <= 1'b0;
        v_valid_reg <= 1'b0;
        frames_good_reg <= 64'd0;
        frames_bad_reg <= 64'd0;
        frames_missing_reg <= 64'd0;
        err_magic_reg <= 32'd0;
        err_length_reg <= 32'd0;
        err_crc_reg <= 32'd0;
        err_version_reg <= 32'd0;
        last_seq_reg <= 32'd0;
        have_expected_reg <= 1'b0;
        expected_reg <= 32'd0;
        bad_since_good_reg <= 32'd0;
        frame_done_reg <= 1'b0;
        frame_seq_reg <= 32'd0;
        frame_ok_reg <= 1'b0;
        m_valid_reg <= 1'b0;
        missing_inc_reg <= 32'd0;
    end
end

assign frames_good = frames_good_reg;
assign frames_bad = frames_bad_reg;
assign frames_missing = frames_missing_reg;
assign err_magic = err_magic_reg;
assign err_length = err_length_reg;
assign err_crc = err_crc_reg;
assign err_version = err_version_reg;
assign last_seq = last_seq_reg;
assign frame_done = frame_done_reg;
assign frame_seq = frame_seq_reg;
assign frame_ok = frame_ok_reg;

endmodule

`resetall
