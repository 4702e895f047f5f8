/*
 * Proof wrapper of the vendor frame generator (third_party/vendor_ip/VendorFrameGen.v): its
 * stream out is checked as an AXI-Stream master (its rules asserted, TKEEP packed as XDMA
 * requires) with the property module the card's proofs use. The generator is started as its
 * data sheet says: FRAME_BYTES of 1 or more and FRAME_COUNT, both held for the whole run; the
 * sink's TREADY is free.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_vendor_frame_gen #
(
    // The generator's seeded bug (0: none), set only by the proof of its seeded bug
    parameter BUG = 0
)
(
    input  wire        ACLK,
    input  wire        ARESETN,
    input  wire        START,
    input  wire [11:0] FRAME_BYTES,
    input  wire [7:0]  FRAME_COUNT,
    input  wire        M_AXIS_TREADY
);

`ifdef FORMAL

    wire [31:0] M_AXIS_TDATA;
    wire [3:0]  M_AXIS_TKEEP;
    wire        M_AXIS_TLAST;
    wire        M_AXIS_TVALID;

    vendor_frame_gen #(
        .BUG(BUG)
    ) dut (
        .ACLK(ACLK),
        .ARESETN(ARESETN),
        .START(START),
        .FRAME_BYTES(FRAME_BYTES),
        .FRAME_COUNT(FRAME_COUNT),
        .M_AXIS_TDATA(M_AXIS_TDATA),
        .M_AXIS_TKEEP(M_AXIS_TKEEP),
        .M_AXIS_TLAST(M_AXIS_TLAST),
        .M_AXIS_TVALID(M_AXIS_TVALID),
        .M_AXIS_TREADY(M_AXIS_TREADY)
    );

    wire rst = !ARESETN;

    faxis_master #(
        .DATA_WIDTH(32),
        .KEEP_WIDTH(4),
        .KEEP_PACKED(1)
    ) f_out (
        .clk(ACLK),
        .rst(rst),
        .tdata(M_AXIS_TDATA),
        .tkeep(M_AXIS_TKEEP),
        .tlast(M_AXIS_TLAST),
        .tvalid(M_AXIS_TVALID),
        .tready(M_AXIS_TREADY)
    );

    reg f_past_valid = 1'b0;

    always @(posedge ACLK) begin
        f_past_valid <= 1'b1;
    end

    // The data sheet's start: a frame size of 1 or more, and the size and count held.
    always @(*) begin
        assume (FRAME_BYTES != 12'd0);
    end

    always @(posedge ACLK) begin
        if (f_past_valid) begin
            assume (FRAME_BYTES == $past(FRAME_BYTES));
            assume (FRAME_COUNT == $past(FRAME_COUNT));
        end
    end

    wire f_fire = M_AXIS_TVALID && M_AXIS_TREADY;

    // The situations a proof must be able to reach, or it proves nothing.
    always @(posedge ACLK) begin
        if (f_past_valid && !rst) begin
            cover_frame_completes: cover (f_fire && M_AXIS_TLAST && $past(f_fire));
            cover_stall_at_last: cover (M_AXIS_TVALID && M_AXIS_TLAST && !M_AXIS_TREADY);
            cover_reset_mid_frame: cover ($past(rst) && $past(M_AXIS_TVALID && !M_AXIS_TLAST, 2));
        end
    end

`endif

endmodule

`resetall
