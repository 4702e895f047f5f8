/*
 * Proof wrapper of axis_skid_buffer: the stream in is checked as a slave (the source's rules
 * assumed), the stream out as a master (its rules asserted), and the slice keeps what it
 * promises: every beat taken comes out once, whole and in order, and it never holds more than
 * two beats. A two-entry model queue of the accepted beats is the reference.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axis_skid_buffer #
(
    // Width of tdata in bits (narrow, so that the solver's state stays small)
    parameter DATA_WIDTH = 16,
    // Width of tkeep (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // The module's seeded bug (0: none), set only by the proof of its seeded bug
    parameter BUG = 0
)
(
    input  wire                   clk,
    input  wire                   rst,
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tlast,
    input  wire                   s_axis_tvalid,
    input  wire                   m_axis_tready
);

`ifdef FORMAL

    wire                  s_axis_tready;
    wire [DATA_WIDTH-1:0] m_axis_tdata;
    wire [KEEP_WIDTH-1:0] m_axis_tkeep;
    wire                  m_axis_tlast;
    wire                  m_axis_tvalid;

    axis_skid_buffer #(
        .DATA_WIDTH(DATA_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH),
        .BUG(BUG)
    ) dut (
        .clk(clk),
        .rst(rst),
        .s_axis_tdata(s_axis_tdata),
        .s_axis_tkeep(s_axis_tkeep),
        .s_axis_tlast(s_axis_tlast),
        .s_axis_tvalid(s_axis_tvalid),
        .s_axis_tready(s_axis_tready),
        .m_axis_tdata(m_axis_tdata),
        .m_axis_tkeep(m_axis_tkeep),
        .m_axis_tlast(m_axis_tlast),
        .m_axis_tvalid(m_axis_tvalid),
        .m_axis_tready(m_axis_tready)
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

    localparam BEAT = DATA_WIDTH + KEEP_WIDTH + 1;

    // The model queue: the beats taken and not yet given, oldest in entry 0.
    reg [BEAT-1:0] f_q0 = {BEAT{1'b0}};
    reg [BEAT-1:0] f_q1 = {BEAT{1'b0}};
    reg [1:0] f_count = 2'd0;

    wire f_in_fire = s_axis_tvalid && s_axis_tready;
    wire f_out_fire = m_axis_tvalid && m_axis_tready;
    wire [BEAT-1:0] f_in_beat = {s_axis_tdata, s_axis_tkeep, s_axis_tlast};
    wire [BEAT-1:0] f_out_beat = {m_axis_tdata, m_axis_tkeep, m_axis_tlast};

    always @(posedge clk) begin
        if (rst) begin
            f_count <= 2'd0;
        end else begin
            case ({f_in_fire, f_out_fire})
                2'b10: begin
                    if (f_count == 2'd0) f_q0 <= f_in_beat;
                    else f_q1 <= f_in_beat;
                    f_count <= f_count + 2'd1;
                end
                2'b01: begin
                    f_q0 <= f_q1;
                    f_count <= f_count - 2'd1;
                end
                2'b11: begin
                    if (f_count == 2'd1) f_q0 <= f_in_beat;
                    else begin
                        f_q0 <= f_q1;
                        f_q1 <= f_in_beat;
                    end
                end
                default: begin
                end
            endcase
        end
    end

    reg f_past_valid = 1'b0;

    always @(posedge clk) begin
        f_past_valid <= 1'b1;
    end

    always @(*) begin
        if (f_past_valid && !rst) begin
            // Never more than two beats held: the slice does not overflow.
            promise_no_overflow: assert (f_count <= 2'd2);
            // Nothing comes out that was not taken: no underflow, no duplicate.
            promise_no_underflow: assert (!m_axis_tvalid || f_count != 2'd0);
            // What comes out is the oldest beat taken, whole: order kept, no byte lost.
            promise_order_kept: assert (!m_axis_tvalid || f_out_beat == f_q0);
            // Holding a beat, the slice shows it at the output.
            promise_shows_what_it_holds: assert (f_count == 2'd0 || m_axis_tvalid);
            // Holding two, it takes no third.
            promise_full_not_ready: assert (f_count != 2'd2 || !s_axis_tready);
        end
    end

    // The situations a proof must be able to reach, or it proves nothing.
    always @(posedge clk) begin
        if (f_past_valid && !rst) begin
            cover_frame_completes: cover (f_out_fire && m_axis_tlast && $past(f_out_fire));
            cover_stall: cover (f_count == 2'd2 && !m_axis_tready);
            cover_reset_mid_frame: cover ($past(rst) && $past(f_count, 2) != 2'd0);
        end
    end

`endif

endmodule

`resetall
