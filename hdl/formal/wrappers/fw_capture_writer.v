/*
 * Proof wrapper of capture_writer: the frame stream in is checked as an AXI-Stream slave (the
 * source's rules assumed), the write-only AXI4 port as a master (its rules asserted on AW, W
 * and B, the slave's assumed; the read channels it does not have are tied idle). The ring's
 * configuration is held stable, as the register file holds it while capturing. What the writer
 * promises at its port besides the protocol: every burst is INCR of full-width beats, within
 * the ring and within one 4 KiB page, and no write data goes out without an address before
 * or beside it.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_capture_writer #
(
    // Width of the stream and AXI data bus in bits (narrow, so that the solver's state stays
    // small)
    parameter DATA_WIDTH = 32,
    // Width of the AXI address bus in bits
    parameter ADDR_WIDTH = 32,
    // Width of tkeep and wstrb
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // Width of the ring offsets in bits
    parameter PTR_WIDTH = 13,
    // Width of frame_bytes in bits
    parameter FRAME_LEN_WIDTH = 6,
    // Longest burst in beats
    parameter BURST_BEATS = 4,
    // Bursts queued or outstanding at once
    parameter DESC_DEPTH = 2
)
(
    input  wire                       clk,
    input  wire                       rst,
    input  wire [PTR_WIDTH-1:0]       ring_base,
    input  wire [PTR_WIDTH-1:0]       ring_size,
    input  wire [PTR_WIDTH-1:0]       rptr,
    input  wire [FRAME_LEN_WIDTH-1:0] frame_bytes,
    input  wire                       ring_reset,
    input  wire                       clear_counters,
    input  wire [DATA_WIDTH-1:0]      s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]      s_axis_tkeep,
    input  wire                       s_axis_tlast,
    input  wire                       s_axis_tvalid,
    input  wire                       m_axi_awready,
    input  wire                       m_axi_wready,
    input  wire [1:0]                 m_axi_bresp,
    input  wire                       m_axi_bvalid
);

`ifdef FORMAL

    wire                  s_axis_tready;
    wire [ADDR_WIDTH-1:0] m_axi_awaddr;
    wire [7:0]            m_axi_awlen;
    wire [2:0]            m_axi_awsize;
    wire [1:0]            m_axi_awburst;
    wire                  m_axi_awvalid;
    wire [DATA_WIDTH-1:0] m_axi_wdata;
    wire [KEEP_WIDTH-1:0] m_axi_wstrb;
    wire                  m_axi_wlast;
    wire                  m_axi_wvalid;
    wire                  m_axi_bready;
    wire [PTR_WIDTH-1:0]  wptr;
    wire [PTR_WIDTH-1:0]  fill;
    wire [63:0]           overflow_count;
    wire                  overflow_event;
    wire [63:0]           frame_count;
    wire [63:0]           bresp_error_count;
    wire                  busy;
    wire                  ring_error;

    capture_writer #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH),
        .PTR_WIDTH(PTR_WIDTH),
        .FRAME_LEN_WIDTH(FRAME_LEN_WIDTH),
        .BURST_BEATS(BURST_BEATS),
        .DESC_DEPTH(DESC_DEPTH)
    ) dut (
        .clk(clk),
        .rst(rst),
        .ring_base(ring_base),
        .ring_size(ring_size),
        .rptr(rptr),
        .frame_bytes(frame_bytes),
        .ring_reset(ring_reset),
        .clear_counters(clear_counters),
        .s_axis_tdata(s_axis_tdata),
        .s_axis_tkeep(s_axis_tkeep),
        .s_axis_tlast(s_axis_tlast),
        .s_axis_tvalid(s_axis_tvalid),
        .s_axis_tready(s_axis_tready),
        .m_axi_awaddr(m_axi_awaddr),
        .m_axi_awlen(m_axi_awlen),
        .m_axi_awsize(m_axi_awsize),
        .m_axi_awburst(m_axi_awburst),
        .m_axi_awvalid(m_axi_awvalid),
        .m_axi_awready(m_axi_awready),
        .m_axi_wdata(m_axi_wdata),
        .m_axi_wstrb(m_axi_wstrb),
        .m_axi_wlast(m_axi_wlast),
        .m_axi_wvalid(m_axi_wvalid),
        .m_axi_wready(m_axi_wready),
        .m_axi_bresp(m_axi_bresp),
        .m_axi_bvalid(m_axi_bvalid),
        .m_axi_bready(m_axi_bready),
        .wptr(wptr),
        .fill(fill),
        .overflow_count(overflow_count),
        .overflow_event(overflow_event),
        .frame_count(frame_count),
        .bresp_error_count(bresp_error_count),
        .busy(busy),
        .ring_error(ring_error)
    );

    faxis_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .KEEP_WIDTH(KEEP_WIDTH),
        .KEEP_PACKED(0)
    ) f_in (
        .clk(clk),
        .rst(rst),
        .tdata(s_axis_tdata),
        .tkeep(s_axis_tkeep),
        .tlast(s_axis_tlast),
        .tvalid(s_axis_tvalid),
        .tready(s_axis_tready)
    );

    // The writer has no ID and no read channels: one ID (0), the read side idle.
    faxi_master #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(1)
    ) f_out (
        .clk(clk),
        .rst(rst),
        .awid(1'b0),
        .awaddr(m_axi_awaddr),
        .awlen(m_axi_awlen),
        .awsize(m_axi_awsize),
        .awburst(m_axi_awburst),
        .awvalid(m_axi_awvalid),
        .awready(m_axi_awready),
        .wdata(m_axi_wdata),
        .wstrb(m_axi_wstrb),
        .wlast(m_axi_wlast),
        .wvalid(m_axi_wvalid),
        .wready(m_axi_wready),
        .bid(1'b0),
        .bresp(m_axi_bresp),
        .bvalid(m_axi_bvalid),
        .bready(m_axi_bready),
        .arid(1'b0),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid(1'b0),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    reg f_past_valid = 1'b0;

    always @(posedge clk) begin
        f_past_valid <= 1'b1;
    end

    // The configuration the register file holds while capturing: a ring of whole bursts,
    // aligned to a burst, inside the 2**PTR_WIDTH-byte memory, and a frame of at least a byte.
    localparam BURST_BYTES = BURST_BEATS * KEEP_WIDTH;

    always @(*) begin
        assume (ring_base % BURST_BYTES == 0);
        assume (ring_size % BURST_BYTES == 0 && ring_size != 0);
        assume ({1'b0, ring_base} + {1'b0, ring_size} <= (1 << PTR_WIDTH));
        assume (frame_bytes != 0);
        assume (!ring_reset);
        assume (!clear_counters);
    end

    always @(posedge clk) begin
        if (f_past_valid) begin
            assume ($stable(ring_base) && $stable(ring_size) && $stable(frame_bytes));
        end
    end

    // A burst's bytes, first and one past the last.
    wire [ADDR_WIDTH:0] f_first = {1'b0, m_axi_awaddr};
    wire [ADDR_WIDTH:0] f_end = f_first + (({1'b0, m_axi_awlen} + 9'd1) * KEEP_WIDTH);

    always @(*) begin
        if (f_past_valid && !rst && m_axi_awvalid) begin
            promise_incr_full_width: assert (m_axi_awburst == 2'b01
                && m_axi_awsize == $clog2(KEEP_WIDTH));
            promise_within_the_ring: assert (f_first >= ring_base
                && f_end <= {1'b0, ring_base} + {1'b0, ring_size});
            promise_within_a_page: assert (f_first[ADDR_WIDTH:12] == ((f_end - 1) >> 12));
            promise_burst_bound: assert (m_axi_awlen < BURST_BEATS);
        end
    end

    always @(posedge clk) begin
        if (f_past_valid && !rst) begin
            cover_burst_written: cover (m_axi_wvalid && m_axi_wready && m_axi_wlast);
            cover_write_stalled: cover (m_axi_wvalid && !m_axi_wready && $past(m_axi_wvalid));
            cover_error_answered: cover (m_axi_bvalid && m_axi_bready && m_axi_bresp != 2'b00);
        end
        cover_reset_mid_burst: cover (rst && $past(m_axi_wvalid && !m_axi_wlast));
    end

`endif

endmodule

`resetall
