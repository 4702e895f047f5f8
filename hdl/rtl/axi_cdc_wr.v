/*
 * AXI4 write channels (AW, W, B) across two clock domains, through asynchronous FIFOs.
 *
 * AW and W travel from s_clk to m_clk, B from m_clk back to s_clk, each in its own
 * async_fifo (Gray-coded pointers, two-flop synchronizers, registered outputs), so no
 * combinational path crosses the domains. The channels stay independent, as AXI allows; their
 * order within each channel is kept.
 *
 * Reset: s_rst and m_rst reset the whole bridge (all three FIFOs go through their reset
 * handshake together; see async_fifo.v). A burst whose address the master side has already
 * issued is never left half done, so the memory controller never waits for data that will
 * not come: while the bridge is in reset, the master side completes every issued burst (and
 * an address it has offered, which AXI does not let it take back) with
 * beats that strobe no byte (nothing is written; WLAST where the burst ends), takes the
 * responses of the bursts issued before the reset and drops them (their issuer was reset),
 * and holds the bridge in reset until nothing is outstanding. Only m_rst itself, a reset of
 * the memory controller's side, forgets them at once, as the controller does.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_cdc_wr #
(
    // Width of the data bus in bits
    parameter DATA_WIDTH = 512,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 31,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of the ID
    parameter ID_WIDTH = 5,
    // log2 of the AW FIFO depth
    parameter AW_FIFO_ADDR_WIDTH = 2,
    // log2 of the W FIFO depth
    parameter W_FIFO_ADDR_WIDTH = 4,
    // log2 of the B FIFO depth
    parameter B_FIFO_ADDR_WIDTH = 2
)
(
    /*
     * AXI4 write slave (s_clk domain)
     */
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [ID_WIDTH-1:0]    s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_awaddr,
    input  wire [7:0]             s_axi_awlen,
    input  wire [2:0]             s_axi_awsize,
    input  wire [1:0]             s_axi_awburst,
    input  wire                   s_axi_awlock,
    input  wire [3:0]             s_axi_awcache,
    input  wire [2:0]             s_axi_awprot,
    input  wire                   s_axi_awvalid,
    output wire                   s_axi_awready,
    input  wire [DATA_WIDTH-1:0]  s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axi_wstrb,
    input  wire                   s_axi_wlast,
    input  wire                   s_axi_wvalid,
    output wire                   s_axi_wready,
    output wire [ID_WIDTH-1:0]    s_axi_bid,
    output wire [1:0]             s_axi_bresp,
    output wire                   s_axi_bvalid,
    input  wire                   s_axi_bready,

    /*
     * AXI4 write master (m_clk domain)
     */
    input  wire                   m_clk,
    input  wire                   m_rst,
    output wire [ID_WIDTH-1:0]    m_axi_awid,
    output wire [ADDR_WIDTH-1:0]  m_axi_awaddr,
    output wire [7:0]             m_axi_awlen,
    output wire [2:0]             m_axi_awsize,
    output wire [1:0]             m_axi_awburst,
    output wire                   m_axi_awlock,
    output wire [3:0]             m_axi_awcache,
    output wire [2:0]             m_axi_awprot,
    output wire                   m_axi_awvalid,
    input  wire                   m_axi_awready,
    output wire [DATA_WIDTH-1:0]  m_axi_wdata,
    output wire [STRB_WIDTH-1:0]  m_axi_wstrb,
    output wire                   m_axi_wlast,
    output wire                   m_axi_wvalid,
    input  wire                   m_axi_wready,
    input  wire [ID_WIDTH-1:0]    m_axi_bid,
    input  wire [1:0]             m_axi_bresp,
    input  wire                   m_axi_bvalid,
    output wire                   m_axi_bready
);

localparam AW_WIDTH = ID_WIDTH + ADDR_WIDTH + 8 + 3 + 2 + 1 + 4 + 3;
localparam W_WIDTH = DATA_WIDTH + STRB_WIDTH + 1;
localparam B_WIDTH = ID_WIDTH + 2;

// check configuration
initial begin
    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end
end

/*
 * Master-side bookkeeping for a reset: the bursts issued (lengths, oldest first) whose W beats
 * are not all out, the beats left of the oldest, and the responses still to come.
 */
localparam LEN_DEPTH = 2**(AW_FIFO_ADDR_WIDTH+1);
localparam LEN_PTR = AW_FIFO_ADDR_WIDTH+1;

wire aw_fifo_valid;
wire aw_fifo_ready;
wire [DATA_WIDTH-1:0] w_fifo_data;
wire [STRB_WIDTH-1:0] w_fifo_strb;
wire w_fifo_last;
wire w_fifo_valid;
wire w_fifo_ready;
wire b_fifo_ready;
wire aw_busy;
wire w_busy;
wire b_busy;
wire [7:0] aw_fifo_len;
// The slave side's reset state needs no action: its FIFO ends are idle while it lasts.
wire aw_s_busy;
wire w_s_busy;
wire b_m_busy;
wire unused_busy = aw_s_busy || w_s_busy || b_m_busy;

reg [7:0] len_mem[LEN_DEPTH-1:0];
reg [LEN_PTR:0] len_wr_reg = {LEN_PTR+1{1'b0}};
reg [LEN_PTR:0] len_rd_reg = {LEN_PTR+1{1'b0}};
reg [7:0] w_done_reg = 8'd0;         // beats of the oldest open burst already out
reg [9:0] b_out_reg = 10'd0;         // bursts issued whose response has not come back
reg flush_reg = 1'b0;                // the bridge is completing what was issued before a reset

wire m_busy = aw_busy || w_busy || b_busy;
// An address or a beat offered on the master side stays offered until it is taken, as AXI
// asks: the flush resets the FIFOs' master ends, which drops their valid, so the bridge holds
// what it offered (the FIFO's output register keeps the payload, since nothing is loaded
// during a reset). A held address counts as issued for the flush: once taken, its burst is
// completed with empty beats like any other.
reg aw_hold_reg = 1'b0;
reg w_hold_reg = 1'b0;
wire len_empty = len_wr_reg == len_rd_reg;
wire len_full = (len_wr_reg ^ len_rd_reg) == {1'b1, {LEN_PTR{1'b0}}};
wire [7:0] head_len = len_mem[len_rd_reg[LEN_PTR-1:0]];
// While in reset, an open burst with no real beat to send is completed with empty beats.
wire pad = m_busy && !len_empty && !w_fifo_valid && !w_hold_reg;
wire aw_fire_m = m_axi_awvalid && m_axi_awready;
wire w_fire_m = m_axi_wvalid && m_axi_wready;
wire w_end = w_fire_m && w_done_reg == head_len;
wire b_fire_m = m_axi_bvalid && m_axi_bready;

assign m_axi_awvalid = (aw_fifo_valid || aw_hold_reg) && !len_full;
assign aw_fifo_ready = m_axi_awready && !len_full;
assign m_axi_wdata = pad ? {DATA_WIDTH{1'b0}} : w_fifo_data;
assign m_axi_wstrb = pad ? {STRB_WIDTH{1'b0}} : w_fifo_strb;
assign m_axi_wlast = pad ? w_done_reg == head_len : w_fifo_last;
// A W beat goes out only after its burst's address, so the count above always knows which
// burst it belongs to.
assign m_axi_wvalid = ((w_fifo_valid || w_hold_reg) && !len_empty) || pad;
assign w_fifo_ready = m_axi_wready && !len_empty && !pad;
// Responses of bursts issued before a reset are taken and dropped (the B FIFO's write side is
// in reset meanwhile, so it takes none of them).
assign m_axi_bready = flush_reg || b_fifo_ready;

always @(posedge m_clk) begin
    if (aw_fire_m) begin
        len_mem[len_wr_reg[LEN_PTR-1:0]] <= aw_fifo_len;
        len_wr_reg <= len_wr_reg + 1'b1;
    end
    if (w_fire_m) begin
        if (w_end) begin
            w_done_reg <= 8'd0;
            len_rd_reg <= len_rd_reg + 1'b1;
        end else begin
            w_done_reg <= w_done_reg + 8'd1;
        end
    end
    b_out_reg <= b_out_reg + {9'd0, aw_fire_m} - {9'd0, b_fire_m};
    aw_hold_reg <= m_axi_awvalid && !m_axi_awready;
    w_hold_reg <= m_axi_wvalid && !m_axi_wready && !pad;

    if (m_busy && (!len_empty || b_out_reg != 10'd0 || m_axi_awvalid)) begin
        flush_reg <= 1'b1;
    end else if (len_empty && b_out_reg == 10'd0 && !m_axi_awvalid) begin
        flush_reg <= 1'b0;
    end

    if (m_rst) begin
        aw_hold_reg <= 1'b0;
        w_hold_reg <= 1'b0;
        len_wr_reg <= {LEN_PTR+1{1'b0}};
        len_rd_reg <= {LEN_PTR+1{1'b0}};
        w_done_reg <= 8'd0;
        b_out_reg <= 10'd0;
        flush_reg <= 1'b0;
    end
end

// The FIFOs' master side stays in reset until the flush is done.
wire m_rst_fifo = m_rst || flush_reg;

async_fifo #(
    .DATA_WIDTH(AW_WIDTH),
    .ADDR_WIDTH(AW_FIFO_ADDR_WIDTH)
)
aw_fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data({s_axi_awid, s_axi_awaddr, s_axi_awlen, s_axi_awsize, s_axi_awburst, s_axi_awlock,
        s_axi_awcache, s_axi_awprot}),
    .s_valid(s_axi_awvalid),
    .s_ready(s_axi_awready),
    .m_clk(m_clk),
    .m_rst(m_rst_fifo),
    .m_data({m_axi_awid, m_axi_awaddr, aw_fifo_len, m_axi_awsize, m_axi_awburst, m_axi_awlock,
        m_axi_awcache, m_axi_awprot}),
    .m_valid(aw_fifo_valid),
    .m_ready(aw_fifo_ready),
    .s_rst_busy(aw_s_busy),
    .m_rst_busy(aw_busy)
);

assign m_axi_awlen = aw_fifo_len;

async_fifo #(
    .DATA_WIDTH(W_WIDTH),
    .ADDR_WIDTH(W_FIFO_ADDR_WIDTH)
)
w_fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data({s_axi_wdata, s_axi_wstrb, s_axi_wlast}),
    .s_valid(s_axi_wvalid),
    .s_ready(s_axi_wready),
    .m_clk(m_clk),
    .m_rst(m_rst_fifo),
    .m_data({w_fifo_data, w_fifo_strb, w_fifo_last}),
    .m_valid(w_fifo_valid),
    .m_ready(w_fifo_ready),
    .s_rst_busy(w_s_busy),
    .m_rst_busy(w_busy)
);

async_fifo #(
    .DATA_WIDTH(B_WIDTH),
    .ADDR_WIDTH(B_FIFO_ADDR_WIDTH)
)
b_fifo_inst (
    .s_clk(m_clk),
    .s_rst(m_rst_fifo),
    .s_data({m_axi_bid, m_axi_bresp}),
    .s_valid(m_axi_bvalid),
    .s_ready(b_fifo_ready),
    .m_clk(s_clk),
    .m_rst(s_rst),
    .m_data({s_axi_bid, s_axi_bresp}),
    .m_valid(s_axi_bvalid),
    .m_ready(s_axi_bready),
    .s_rst_busy(b_busy),
    .m_rst_busy(b_m_busy)
);

endmodule

`resetall
