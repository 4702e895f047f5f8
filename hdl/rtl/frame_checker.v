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
 * Timing: counters, last_seq and the frame_done pulse (with frame_seq and frame_ok) update two
 * cycles after the TLAST beat's handshake. A clear in the same cycle as a counter update wins.
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
localparam [17:0] MIN_LEN = 18'd64;
localparam [17:0] MAX_LEN = 18'h10000;
// The raw CRC register after a frame and its own trailer (the inverse of 0x2144df1c).
localparam [31:0] CRC_RESIDUE_RAW = 32'hdebb20e3;

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

// Stage 1: the frame being received.
reg in_frame_reg = 1'b0;
reg [17:0] bytes_reg = 18'd0;
reg keep_err_reg = 1'b0;
reg magic_ok_reg = 1'b0;
reg version_ok_reg = 1'b0;
reg [31:0] seq_reg = 32'd0;
reg [31:0] plen_reg = 32'd0;
reg [31:0] crc_reg = 32'hffffffff;

// Stage 1 -> 2: the verdict on a frame that just ended.
reg e_valid_reg = 1'b0;
reg e_magic_err_reg = 1'b0;
reg e_version_err_reg = 1'b0;
reg e_length_err_reg = 1'b0;
reg e_crc_err_reg = 1'b0;
reg [31:0] e_seq_reg = 32'd0;

// Stage 2: counters and sequence tracking.
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

assign s_axis_tready = 1'b1;

// Bytes of this beat: all 16 unless it is the last, whose TKEEP must be a run from lane 0.
reg [4:0] keep_run;
integer i;

always @* begin
    keep_run = 5'd0;
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (s_axis_tkeep[i] && {27'd0, keep_run} == i) begin
            keep_run = keep_run + 5'd1;
        end
    end
end

wire [KEEP_WIDTH-1:0] keep_run_mask = ~({KEEP_WIDTH{1'b1}} << keep_run);
wire keep_bad = s_axis_tlast
    ? (keep_run == 5'd0 || s_axis_tkeep != keep_run_mask)
    : (s_axis_tkeep != {KEEP_WIDTH{1'b1}});
wire [4:0] beat_bytes = s_axis_tlast ? keep_run : 5'd16;

wire first = !in_frame_reg;
wire magic_ok = first ? s_axis_tdata[31:0] == MAGIC : magic_ok_reg;
wire version_ok = first ? s_axis_tdata[39:32] == VERSION : version_ok_reg;
wire [31:0] seq = first ? s_axis_tdata[95:64] : seq_reg;
wire [31:0] plen = first ? s_axis_tdata[127:96] : plen_reg;

// Byte count of the frame so far, saturating far above any legal length.
wire [18:0] bytes_prev = first ? 19'd0 : {1'b0, bytes_reg};
wire [18:0] bytes_sum = bytes_prev + {14'd0, beat_bytes};
wire [17:0] bytes_total = bytes_sum[18] ? 18'h3ffff : bytes_sum[17:0];

wire [32:0] header_len = {1'b0, plen} + 33'd36;

wire [31:0] crc_in = first ? 32'hffffffff : crc_reg;
wire [31:0] crc_out;

frame_crc32 #(
    .DATA_WIDTH(DATA_WIDTH),
    .COUNT_WIDTH(5)
)
crc_inst (
    .state_in(crc_in),
    .data(s_axis_tdata),
    .nbytes(beat_bytes),
    .state_out(crc_out)
);

// Stage 2 arithmetic: the gap to the expected number, less the bad frames received in it.
wire [31:0] seq_delta = e_seq_reg - expected_reg;
wire [31:0] gap_excused = bad_since_good_reg < seq_delta ? bad_since_good_reg : seq_delta;
wire e_bad = e_magic_err_reg || e_version_err_reg || e_length_err_reg || e_crc_err_reg;

always @(posedge clk) begin
    e_valid_reg <= 1'b0;
    frame_done_reg <= 1'b0;

    if (s_axis_tvalid) begin
        in_frame_reg <= !s_axis_tlast;
        bytes_reg <= bytes_total;
        keep_err_reg <= (!first && keep_err_reg) || keep_bad;
        magic_ok_reg <= magic_ok;
        version_ok_reg <= version_ok;
        seq_reg <= seq;
        plen_reg <= plen;
        crc_reg <= crc_out;

        if (s_axis_tlast) begin
            e_valid_reg <= 1'b1;
            e_magic_err_reg <= !magic_ok;
            e_version_err_reg <= !version_ok;
            e_length_err_reg <= (!first && keep_err_reg) || keep_bad
                || bytes_total < MIN_LEN || bytes_total > MAX_LEN
                || {15'd0, bytes_total} != header_len;
            e_crc_err_reg <= crc_out != CRC_RESIDUE_RAW;
            e_seq_reg <= seq;
        end
    end

    if (e_valid_reg) begin
        frame_done_reg <= 1'b1;
        frame_seq_reg <= e_seq_reg;
        frame_ok_reg <= !e_bad;
        last_seq_reg <= e_seq_reg;
        if (e_magic_err_reg) begin
            err_magic_reg <= err_magic_reg + 32'd1;
        end
        if (e_version_err_reg) begin
            err_version_reg <= err_version_reg + 32'd1;
        end
        if (e_length_err_reg) begin
            err_length_reg <= err_length_reg + 32'd1;
        end
        if (e_crc_err_reg) begin
            err_crc_reg <= err_crc_reg + 32'd1;
        end
        if (e_bad) begin
            frames_bad_reg <= frames_bad_reg + 64'd1;
            if (bad_since_good_reg != 32'hffffffff) begin
                bad_since_good_reg <= bad_since_good_reg + 32'd1;
            end
        end else begin
            frames_good_reg <= frames_good_reg + 64'd1;
            if (have_expected_reg && !seq_delta[31]) begin
                frames_missing_reg <= frames_missing_reg + {32'd0, seq_delta - gap_excused};
            end
            have_expected_reg <= 1'b1;
            expected_reg <= e_seq_reg + 32'd1;
            bad_since_good_reg <= 32'd0;
        end
    end

    if (clear) begin
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
        e_valid_reg <= 1'b0;
        frames_good_reg <= 64'd0;
        frames_bad_reg <= 64'd0;
        frames_missing_reg <= 64'd0;
        err_magic_reg <= 32'd0;
        err_length_reg <= 32'd0;
        err_crc_reg <= 32'd0;
        err_version_reg <= 32'd0;
        last_seq_reg <= 32'd0;
        have_expected_reg <= 1'b0;
        bad_since_good_reg <= 32'd0;
        frame_done_reg <= 1'b0;
        frame_ok_reg <= 1'b0;
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
