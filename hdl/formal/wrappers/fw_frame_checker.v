/*
 * Proof wrapper of frame_checker: the stream in is checked as an AXI-Stream slave (the source's
 * rules assumed). What the checker promises in its header comment: it is always ready, every
 * frame is judged once, four cycles after its TLAST handshake (the frame_done pulse), and it
 * counts each judged frame once, good or bad.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_frame_checker #
(
    // Width of the stream data in bits (the frame layout needs 128)
    parameter DATA_WIDTH = 128,
    // Width of tkeep
    parameter KEEP_WIDTH = DATA_WIDTH/8
)
(
    input  wire                  clk,
    input  wire                  rst,
    input  wire                  clear,
    input  wire [DATA_WIDTH-1:0] s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0] s_axis_tkeep,
    input  wire                  s_axis_tlast,
    input  wire                  s_axis_tvalid
);

`ifdef FORMAL

    wire        s_axis_tready;
    wire [63:0] frames_good;
    wire [63:0] frames_bad;
    wire [63:0] frames_missing;
    wire [31:0] err_magic;
    wire [31:0] err_length;
    wire [31:0] err_crc;
    wire [31:0] err_version;
    wire [31:0] last_seq;
    wire        frame_done;
    wire [31:0] frame_seq;
    wire        frame_ok;

    frame_checker #(
        .DATA_WIDTH(DATA_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH)
    ) dut (
        .clk(clk),
        .rst(rst),
        .clear(clear),
        .s_axis_tdata(s_axis_tdata),
        .s_axis_tkeep(s_axis_tkeep),
        .s_axis_tlast(s_axis_tlast),
        .s_axis_tvalid(s_axis_tvalid),
        .s_axis_tready(s_axis_tready),
        .frames_good(frames_good),
        .frames_bad(frames_bad),
        .frames_missing(frames_missing),
        .err_magic(err_magic),
        .err_length(err_length),
        .err_crc(err_crc),
        .err_version(err_version),
        .last_seq(last_seq),
        .frame_done(frame_done),
        .frame_seq(frame_seq),
        .frame_ok(frame_ok)
    );

    faxis_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH),
        .KEEP_PACKED(1)
    ) f_in (
        .clk(clk),
        .rst(rst),
        .tdata(s_axis_tdata),
        .tkeep(s_axis_tkeep),
        .tlast(s_axis_tlast),
        .tvalid(s_axis_tvalid),
        .tready(s_axis_tready)
    );

    // Counters are cleared only by reset here: a clear wins over a count by design, which the
    // promise below does not model.
    always @(*) begin
        assume (!clear);
    end

    // Cycles since reset, saturating: the pipeline's four stages are clean after four.
    reg [2:0] f_since_rst = 3'd0;

    always @(posedge clk) begin
        if (rst) begin
            f_since_rst <= 3'd0;
        end else if (f_since_rst != 3'd7) begin
            f_since_rst <= f_since_rst + 3'd1;
        end
    end

    wire f_end = s_axis_tvalid && s_axis_tready && s_axis_tlast;
    wire [64:0] f_counted = {1'b0, frames_good} + {1'b0, frames_bad};

    always @(posedge clk) begin
        if (!rst) begin
            promise_always_ready: assert (s_axis_tready);
        end
        if (!rst && f_since_rst >= 3'd5) begin
            // Judged four cycles after the TLAST handshake, and only then.
            promise_judged_after_four: assert (frame_done == $past(f_end, 4));
            // Each judged frame counted once, good or bad.
            promise_counted_once: assert (f_counted == $past(f_counted) + {64'd0, frame_done});
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_frame_judged: cover (frame_done);
            cover_two_frames: cover (frame_done && $past(frame_done) && f_since_rst >= 3'd5);
        end
        cover_reset_mid_frame: cover (rst && $past(s_axis_tvalid && !s_axis_tlast));
    end

`endif

endmodule

`resetall
