/*
 * AXI4 read channels (AR, R) across two clock domains, through asynchronous FIFOs.
 *
 * AR travels from s_clk to m_clk, R from m_clk back to s_clk, each in its own async_fifo
 * (Gray-coded pointers, two-flop synchronizers, registered outputs), so no combinational path
 * crosses the domains. Order within each channel is kept.
 *
 * Reset: s_rst and m_rst reset the whole bridge (both FIFOs go through their reset handshake
 * together; see async_fifo.v). Read data for requests issued before a reset is never handed to
 * anyone after it: while the bridge is in reset, the master side takes and drops the beats
 * still to come for the requests it issued (and for a request it has offered, which AXI does
 * not let it take back: it stays offered until taken), and holds the bridge in reset until
 * none is outstanding. Only m_rst itself, a reset of the memory controller's side, forgets them at
 * once, as the controller does.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_cdc_rd #
(
    // Width of the data bus in bits
    parameter DATA_WIDTH = 512,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 31,
    // Width of the ID
    parameter ID_WIDTH = 5,
    // log2 of the AR FIFO depth
    parameter AR_FIFO_ADDR_WIDTH = 3,
    // log2 of the R FIFO depth
    parameter R_FIFO_ADDR_WIDTH = 4
)
(
    /*
     * AXI4 read slave (s_clk domain)
     */
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [ID_WIDTH-1:0]    s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_araddr,
    input  wire [7:0]             s_axi_arlen,
    input  wire [2:0]             s_axi_arsize,
    input  wire [1:0]             s_axi_arburst,
    input  wire                   s_axi_arlock,
    input  wire [3:0]             s_axi_arcache,
    input  wire [2:0]             s_axi_arprot,
    input  wire                   s_axi_arvalid,
    output wire                   s_axi_arready,
    output wire [ID_WIDTH-1:0]    s_axi_rid,
    output wire [DATA_WIDTH-1:0]  s_axi_rdata,
    output wire [1:0]             s_axi_rresp,
    output wire                   s_axi_rlast,
    output wire                   s_axi_rvalid,
    input  wire                   s_axi_rready,

    /*
     * AXI4 read master (m_clk domain)
     */
    input  wire                   m_clk,
    input  wire                   m_rst,
    output wire [ID_WIDTH-1:0]    m_axi_arid,
    output wire [ADDR_WIDTH-1:0]  m_axi_araddr,
    output wire [7:0]             m_axi_arlen,
    output wire [2:0]             m_axi_arsize,
    output wire [1:0]             m_axi_arburst,
    output wire                   m_axi_arlock,
    output wire [3:0]             m_axi_arcache,
    output wire [2:0]             m_axi_arprot,
    output wire                   m_axi_arvalid,
    input  wire                   m_axi_arready,
    input  wire [ID_WIDTH-1:0]    m_axi_rid,
    input  wire [DATA_WIDTH-1:0]  m_axi_rdata,
    input  wire [1:0]             m_axi_rresp,
    input  wire                   m_axi_rlast,
    input  wire                   m_axi_rvalid,
    output wire                   m_axi_rready
);

localparam AR_WIDTH = ID_WIDTH + ADDR_WIDTH + 8 + 3 + 2 + 1 + 4 + 3;
localparam R_WIDTH = ID_WIDTH + DATA_WIDTH + 2 + 1;

// check configuration
initial begin
    if (DATA_WIDTH < 8 || ID_WIDTH < 1) begin
        $error("Error: DATA_WIDTH must be at least 8 and ID_WIDTH at least 1 (instance %m)");
        $finish;
    end
end

/*
 * Master-side bookkeeping for a reset: the read beats still to come for the requests issued.
 */
wire ar_fifo_valid;
wire ar_fifo_ready;
wire [7:0] ar_fifo_len;
wire r_fifo_ready;
wire ar_busy;
wire r_busy;
// The slave side's reset state needs no action: its FIFO ends are idle while it lasts.
wire ar_s_busy;
wire r_m_busy;
wire unused_busy = ar_s_busy || r_m_busy;

reg [16:0] r_out_reg = 17'd0;        // beats owed by the memory controller
reg flush_reg = 1'b0;

wire m_busy = ar_busy || r_busy;
wire ar_fire_m = m_axi_arvalid && m_axi_arready;
wire r_fire_m = m_axi_rvalid && m_axi_rready;

// A request offered on the master side stays offered until it is taken, as AXI asks: the flush
// resets the AR FIFO's master end, which drops its valid, so the bridge holds what it offered
// (the FIFO's output register keeps the payload, since nothing is loaded during a reset). The
// flush lasts until a held request is taken and its beats are drained.
reg ar_hold_reg = 1'b0;

assign m_axi_arvalid = ar_fifo_valid || ar_hold_reg;
assign ar_fifo_ready = m_axi_arready;
assign m_axi_arlen = ar_fifo_len;
// Beats of requests issued before a reset are taken and dropped.
assign m_axi_rready = flush_reg || r_fifo_ready;

always @(posedge m_clk) begin
    r_out_reg <= r_out_reg + (ar_fire_m ? {9'd0, ar_fifo_len} + 17'd1 : 17'd0)
        - {16'd0, r_fire_m};

    ar_hold_reg <= m_axi_arvalid && !m_axi_arready;

    if (m_busy && (r_out_reg != 17'd0 || m_axi_arvalid)) begin
        flush_reg <= 1'b1;
    end else if (r_out_reg == 17'd0 && !m_axi_arvalid) begin
        flush_reg <= 1'b0;
    end

    if (m_rst) begin
        ar_hold_reg <= 1'b0;
        r_out_reg <= 17'd0;
        flush_reg <= 1'b0;
    end
end

// The FIFOs' master side stays in reset until the flush is done.
wire m_rst_fifo = m_rst || flush_reg;

async_fifo #(
    .DATA_WIDTH(AR_WIDTH),
    .ADDR_WIDTH(AR_FIFO_ADDR_WIDTH)
)
ar_fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data({s_axi_arid, s_axi_araddr, s_axi_arlen, s_axi_arsize, s_axi_arburst, s_axi_arlock,
        s_axi_arcache, s_axi_arprot}),
    .s_valid(s_axi_arvalid),
    .s_ready(s_axi_arready),
    .m_clk(m_clk),
    .m_rst(m_rst_fifo),
    .m_data({m_axi_arid, m_axi_araddr, ar_fifo_len, m_axi_arsize, m_axi_arburst, m_axi_arlock,
        m_axi_arcache, m_axi_arprot}),
    .m_valid(ar_fifo_valid),
    .m_ready(ar_fifo_ready),
    .s_rst_busy(ar_s_busy),
    .m_rst_busy(ar_busy)
);

async_fifo #(
    .DATA_WIDTH(R_WIDTH),
    .ADDR_WIDTH(R_FIFO_ADDR_WIDTH)
)
r_fifo_inst (
    .s_clk(m_clk),
    .s_rst(m_rst_fifo),
    .s_data({m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast}),
    .s_valid(m_axi_rvalid),
    .s_ready(r_fifo_ready),
    .m_clk(s_clk),
    .m_rst(s_rst),
    .m_data({s_axi_rid, s_axi_rdata, s_axi_rresp, s_axi_rlast}),
    .m_valid(s_axi_rvalid),
    .m_ready(s_axi_rready),
    .s_rst_busy(r_busy),
    .m_rst_busy(r_m_busy)
);

endmodule

`resetall
