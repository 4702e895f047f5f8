/*
 * Proof wrapper of frame_source: the stream out is checked as an AXI-Stream master (the sink's
 * rules assumed). What the source promises in its header comment and docs/frame-format.md: a
 * frame of frame_len bytes takes ceil(frame_len / 16) beats, TLAST on the last; TKEEP keeps
 * frame_len % 16 bytes (16 if zero) of the last beat; every frame starts with the magic word;
 * a frame is never cut, by a clear or by the drop policy; and sequence numbers count up from
 * frame to frame (by more than one past dropped frames) until a clear restarts them.
 *
 * The register file holds the configuration stable while frames run (frame_len is read when a
 * frame starts), so frame_len is one value for the whole proof, the solver's choice, small
 * enough for a frame to fit the small FIFO and the proof's depth. Enable, clear, the drop
 * policy, the pattern and the gap are the solver's at every cycle; one-shot requests are left
 * out, as their frames first spend SEED_CYCLES (34) on the seed, deeper than the proof goes.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_frame_source #
(
    // Width of the stream data in bits (the frame layout needs 128)
    parameter DATA_WIDTH = 128,
    // Width of tkeep
    parameter KEEP_WIDTH = DATA_WIDTH/8,
    // FIFO depth in beats: room for the longest frame the proof lets the solver choose
    parameter FIFO_DEPTH = 8,
    // The card's deliberate fault (a repeated sequence number every N-th frame), on from reset
    // when non-zero: its seeded proof must fail; 0 (the card's every real build) proves the
    // source
    parameter FAULT_SEQ_REPEAT = 0
)
(
    input  wire                  clk,
    input  wire                  rst,
    input  wire                  clear,
    input  wire                  enable,
    input  wire [7:0]            channel,
    input  wire [16:0]           frame_len,
    input  wire [31:0]           gap_cycles,
    input  wire                  pattern,
    input  wire [31:0]           seed,
    input  wire                  drop_policy,
    input  wire [63:0]           timestamp,
    input  wire                  m_axis_tready
);

`ifdef FORMAL

    localparam [31:0] MAGIC = 32'h46514144;

    wire [DATA_WIDTH-1:0] m_axis_tdata;
    wire [KEEP_WIDTH-1:0] m_axis_tkeep;
    wire                  m_axis_tlast;
    wire                  m_axis_tvalid;
    wire [63:0]           frames_sent;
    wire [63:0]           frames_dropped;
    wire                  send_ready;
    wire                  clearing;
    wire                  clear_tail;

    frame_source #(
        .DATA_WIDTH(DATA_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH),
        .FIFO_DEPTH(FIFO_DEPTH),
        .FAULT_SEQ_REPEAT(FAULT_SEQ_REPEAT)
    ) dut (
        .clk(clk),
        .rst(rst),
        .clear(clear),
        .enable(enable),
        .channel(channel),
        .frame_len(frame_len),
        .gap_cycles(gap_cycles),
        .pattern(pattern),
        .seed(seed),
        .drop_policy(drop_policy),
        .timestamp(timestamp),
        .oneshot(1'b0),
        .send(1'b0),
        .send_seq(32'd0),
        .m_axis_tdata(m_axis_tdata),
        .m_axis_tkeep(m_axis_tkeep),
        .m_axis_tlast(m_axis_tlast),
        .m_axis_tvalid(m_axis_tvalid),
        .m_axis_tready(m_axis_tready),
        .frames_sent(frames_sent),
        .frames_dropped(frames_dropped),
        .send_ready(send_ready),
        .clearing(clearing),
        .clear_tail(clear_tail),
        .fault_seq_repeat_en(FAULT_SEQ_REPEAT != 0)
    );

    faxis_master #(
        .DATA_WIDTH(DATA_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH),
        .KEEP_PACKED(1)
    ) f_out (
        .clk(clk),
        .rst(rst),
        .tdata(m_axis_tdata),
        .tkeep(m_axis_tkeep),
        .tlast(m_axis_tlast),
        .tvalid(m_axis_tvalid),
        .tready(m_axis_tready)
    );

    // One frame length for the whole proof, from the shortest frame (64 bytes, 4 beats) to
    // one of 7 beats.
    reg f_past_valid = 1'b0;

    always @(posedge clk) begin
        f_past_valid <= 1'b1;
    end

    always @(*) begin
        assume (frame_len >= 17'd64 && frame_len <= 17'd112);
    end

    always @(posedge clk) begin
        if (f_past_valid) begin
            assume (frame_len == $past(frame_len));
        end
    end

    // The frame's beats and the last beat's bytes, from frame_len alone.
    wire [12:0] f_beats = frame_len[16:4] + {12'd0, frame_len[3:0] != 4'd0};
    wire [4:0]  f_last_bytes = (frame_len[3:0] == 4'd0) ? 5'd16 : {1'b0, frame_len[3:0]};
    wire [KEEP_WIDTH-1:0] f_last_keep = {KEEP_WIDTH{1'b1}} >> (5'd16 - f_last_bytes);

    // Beats of the frame on the bus so far (a reset starts over).
    reg [12:0] f_beat = 13'd0;
    wire f_take = m_axis_tvalid && m_axis_tready;

    always @(posedge clk) begin
        if (rst) begin
            f_beat <= 13'd0;
        end else if (f_take) begin
            f_beat <= m_axis_tlast ? 13'd0 : f_beat + 13'd1;
        end
    end

    // The sequence number of the last frame that started on the bus since the last reset or
    // clear (after a clear, no frame starts before the restart, and the next is numbered 0).
    wire [31:0] f_seq = m_axis_tdata[95:64];
    reg [31:0] f_last_seq = 32'd0;
    reg        f_have_seq = 1'b0;

    always @(posedge clk) begin
        if (f_take && f_beat == 13'd0) begin
            f_last_seq <= f_seq;
            f_have_seq <= 1'b1;
        end
        if (rst || clear) begin
            f_have_seq <= 1'b0;
        end
    end

    always @(posedge clk) begin
        if (!rst && m_axis_tvalid && f_beat == 13'd0 && f_have_seq) begin
            promise_seq_counts_up: assert (f_seq > f_last_seq);
        end
    end

    always @(posedge clk) begin
        if (!rst && m_axis_tvalid) begin
            // TLAST on the frame's last beat and on no other: a frame is never cut.
            promise_whole_frames: assert (m_axis_tlast == (f_beat + 13'd1 == f_beats));
            promise_no_longer_frames: assert (f_beat < f_beats);
            // The last beat keeps the frame's remaining bytes, from lane 0 up.
            if (m_axis_tlast) begin
                promise_last_keep: assert (m_axis_tkeep == f_last_keep);
            end
            // Every frame starts with the magic word.
            if (f_beat == 13'd0) begin
                promise_magic_first: assert (m_axis_tdata[31:0] == MAGIC);
            end
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_frame_sent: cover (f_take && m_axis_tlast);
            cover_frame_stalled: cover (f_take && m_axis_tlast && $past(m_axis_tvalid && !m_axis_tready));
            cover_clear_in_flight: cover (clear && m_axis_tvalid && f_beat != 13'd0);
            cover_second_frame: cover (f_take && f_beat == 13'd0 && f_have_seq);
        end
        cover_reset_mid_frame: cover (rst && $past(m_axis_tvalid && !m_axis_tlast));
    end

`endif

endmodule

`resetall
