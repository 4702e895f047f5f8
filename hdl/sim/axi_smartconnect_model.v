/*
 * Simulation-only model of the AXI SmartConnect between the XDMA IP's M_AXI and a MIG
 * 7-series S_AXI, as the reference board's bare memory path had it: one slave port (128-bit,
 * s_clk = axi_aclk, 250 MHz), one master port (512-bit, m_clk = ui_clk, 200 MHz), width
 * up-conversion and asynchronous clock conversion.
 *
 * What PG247 (AXI SmartConnect v1.0) documents, and how the model follows it:
 * - Upsizing packs and never splits ("AXI Upsizer"): each 128-bit INCR burst becomes one
 *   512-bit burst over the same bytes. The card's own width converters do exactly that, so the
 *   model uses them (axi_wr_upsizer, axi_rd_upsizer: one home for byte lanes and bursts).
 * - The clocks are asynchronous (250 and 200 MHz from different sources are not the
 *   same-source integer ratio that PG247's "Clocking" section needs for the synchronous
 *   converter), so every channel crosses through an asynchronous FIFO (axi_cdc_wr,
 *   axi_cdc_rd).
 * - Buffering: a Vivado-generated 1x1 SmartConnect with asynchronous clocks and width
 *   conversion has one node per channel with a 32-entry FIFO (C_FIFO_SIZE = 5, distributed
 *   RAM), in the parameters of aws/aws-fpga's cl_axi_sc_1x1 block design. FIFO_ADDR_WIDTH = 5
 *   gives every channel that depth.
 * - Cut-through, not packet mode ("Internal Payload Buffering": packet mode is off by
 *   default; with it off an AW goes on before its W data and an AR is issued without room for
 *   its whole burst in the R FIFO): the crossings pass each channel on as it comes.
 * - Outstanding transactions: 32 reads and 32 writes per slave port (acceptance 32 in the same
 *   generated parameters): OUTSTANDING reads are remembered by the read converter; writes are
 *   bounded by the FIFOs.
 * - Reads and writes travel independent paths, and SmartConnect orders neither against the
 *   other: interleaving between them is the memory controller's.
 * - No ID reaches the memory controller's ordering (a 1x1 SmartConnect's MI has no ID signals
 *   by default): it sees one thread and answers in order. The read converter issues every
 *   burst with one ID and gives the slave its IDs back; write IDs pass through, which changes
 *   nothing, as the controller answers writes in AW order.
 *
 * Not documented, hence not modelled beyond what the FIFOs and converters cost: PG247 gives no
 * latency in cycles ("tuned for high clock frequency, at the expense of latency"). A generated
 * SmartConnect has three synchroniser stages where async_fifo has two, and register slices
 * that the model does not have, so its latency is if anything a little lower than the IP's.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_smartconnect_model #
(
    // Width of the slave data bus in bits
    parameter S_DATA_WIDTH = 128,
    // Width of the slave byte address in bits
    parameter S_ADDR_WIDTH = 64,
    // Width of the slave ID
    parameter S_ID_WIDTH = 4,
    // Width of the master data bus in bits (a power-of-two multiple of S_DATA_WIDTH)
    parameter M_DATA_WIDTH = 512,
    // Width of the master byte address in bits
    parameter M_ADDR_WIDTH = 31,
    // Width of the master ID (driven constant)
    parameter M_ID_WIDTH = 5,
    // Width of the slave write strobe
    parameter S_STRB_WIDTH = (S_DATA_WIDTH/8),
    // Width of the master write strobe
    parameter M_STRB_WIDTH = (M_DATA_WIDTH/8),
    // log2 of the depth of every channel's clock-crossing FIFO (5: SmartConnect's 32 entries)
    parameter FIFO_ADDR_WIDTH = 5,
    // Read bursts in flight at once (a power of two; 32: SmartConnect's read acceptance)
    parameter OUTSTANDING = 32
)
(
    input  wire                     s_clk,
    input  wire                     s_rst,

    /*
     * AXI4 slave (s_clk domain): the DMA engine's M_AXI
     */
    input  wire [S_ID_WIDTH-1:0]      s_axi_awid,
    input  wire [S_ADDR_WIDTH-1:0]    s_axi_awaddr,
    input  wire [7:0]                 s_axi_awlen,
    input  wire [2:0]                 s_axi_awsize,
    input  wire [1:0]                 s_axi_awburst,
    input  wire                       s_axi_awlock,
    input  wire [3:0]                 s_axi_awcache,
    input  wire [2:0]                 s_axi_awprot,
    input  wire                       s_axi_awvalid,
    output wire                       s_axi_awready,
    input  wire [S_DATA_WIDTH-1:0]    s_axi_wdata,
    input  wire [S_STRB_WIDTH-1:0]    s_axi_wstrb,
    input  wire                       s_axi_wlast,
    input  wire                       s_axi_wvalid,
    output wire                       s_axi_wready,
    output wire [S_ID_WIDTH-1:0]      s_axi_bid,
    output wire [1:0]                 s_axi_bresp,
    output wire                       s_axi_bvalid,
    input  wire                       s_axi_bready,
    input  wire [S_ID_WIDTH-1:0]      s_axi_arid,
    input  wire [S_ADDR_WIDTH-1:0]    s_axi_araddr,
    input  wire [7:0]                 s_axi_arlen,
    input  wire [2:0]                 s_axi_arsize,
    input  wire [1:0]                 s_axi_arburst,
    input  wire                       s_axi_arlock,
    input  wire [3:0]                 s_axi_arcache,
    input  wire [2:0]                 s_axi_arprot,
    input  wire                       s_axi_arvalid,
    output wire                       s_axi_arready,
    output wire [S_ID_WIDTH-1:0]      s_axi_rid,
    output wire [S_DATA_WIDTH-1:0]    s_axi_rdata,
    output wire [1:0]                 s_axi_rresp,
    output wire                       s_axi_rlast,
    output wire                       s_axi_rvalid,
    input  wire                       s_axi_rready,

    input  wire                     m_clk,
    input  wire                     m_rst,

    /*
     * AXI4 master (m_clk domain): the memory controller's S_AXI
     */
    output wire [M_ID_WIDTH-1:0]      m_axi_awid,
    output wire [M_ADDR_WIDTH-1:0]    m_axi_awaddr,
    output wire [7:0]                 m_axi_awlen,
    output wire [2:0]                 m_axi_awsize,
    output wire [1:0]                 m_axi_awburst,
    output wire                       m_axi_awlock,
    output wire [3:0]                 m_axi_awcache,
    output wire [2:0]                 m_axi_awprot,
    output wire                       m_axi_awvalid,
    input  wire                       m_axi_awready,
    output wire [M_DATA_WIDTH-1:0]    m_axi_wdata,
    output wire [M_STRB_WIDTH-1:0]    m_axi_wstrb,
    output wire                       m_axi_wlast,
    output wire                       m_axi_wvalid,
    input  wire                       m_axi_wready,
    input  wire [M_ID_WIDTH-1:0]      m_axi_bid,
    input  wire [1:0]                 m_axi_bresp,
    input  wire                       m_axi_bvalid,
    output wire                       m_axi_bready,
    output wire [M_ID_WIDTH-1:0]      m_axi_arid,
    output wire [M_ADDR_WIDTH-1:0]    m_axi_araddr,
    output wire [7:0]                 m_axi_arlen,
    output wire [2:0]                 m_axi_arsize,
    output wire [1:0]                 m_axi_arburst,
    output wire                       m_axi_arlock,
    output wire [3:0]                 m_axi_arcache,
    output wire [2:0]                 m_axi_arprot,
    output wire                       m_axi_arvalid,
    input  wire                       m_axi_arready,
    input  wire [M_ID_WIDTH-1:0]      m_axi_rid,
    input  wire [M_DATA_WIDTH-1:0]    m_axi_rdata,
    input  wire [1:0]                 m_axi_rresp,
    input  wire                       m_axi_rlast,
    input  wire                       m_axi_rvalid,
    output wire                       m_axi_rready
);

// check configuration
initial begin
    if (M_DATA_WIDTH <= S_DATA_WIDTH || M_DATA_WIDTH % S_DATA_WIDTH != 0) begin
        $error("Error: M_DATA_WIDTH must be a multiple of S_DATA_WIDTH above it (instance %m)");
        $finish;
    end

    if (M_ID_WIDTH < S_ID_WIDTH) begin
        $error("Error: M_ID_WIDTH must be at least S_ID_WIDTH (instance %m)");
        $finish;
    end

    if (FIFO_ADDR_WIDTH < 2) begin
        $error("Error: FIFO_ADDR_WIDTH must be at least 2 (instance %m)");
        $finish;
    end
end

/*
 * Width converters -> clock crossings (s_clk domain, master width)
 */
wire [M_ID_WIDTH-1:0]      up_awid;
wire [M_ADDR_WIDTH-1:0]    up_awaddr;
wire [7:0]                 up_awlen;
wire [2:0]                 up_awsize;
wire [1:0]                 up_awburst;
wire                       up_awlock;
wire [3:0]                 up_awcache;
wire [2:0]                 up_awprot;
wire                       up_awvalid;
wire                       up_awready;
wire [M_DATA_WIDTH-1:0]    up_wdata;
wire [M_STRB_WIDTH-1:0]    up_wstrb;
wire                       up_wlast;
wire                       up_wvalid;
wire                       up_wready;
wire [M_ID_WIDTH-1:0]      up_bid;
wire [1:0]                 up_bresp;
wire                       up_bvalid;
wire                       up_bready;
wire [M_ID_WIDTH-1:0]      up_arid;
wire [M_ADDR_WIDTH-1:0]    up_araddr;
wire [7:0]                 up_arlen;
wire [2:0]                 up_arsize;
wire [1:0]                 up_arburst;
wire                       up_arlock;
wire [3:0]                 up_arcache;
wire [2:0]                 up_arprot;
wire                       up_arvalid;
wire                       up_arready;
wire [M_ID_WIDTH-1:0]      up_rid;
wire [M_DATA_WIDTH-1:0]    up_rdata;
wire [1:0]                 up_rresp;
wire                       up_rlast;
wire                       up_rvalid;
wire                       up_rready;

// The write converter keeps the ID width on both sides: the slave's ID, widened.
wire [M_ID_WIDTH-1:0] wr_s_awid = {{M_ID_WIDTH-S_ID_WIDTH{1'b0}}, s_axi_awid};
wire [M_ID_WIDTH-1:0] wr_s_bid;
assign s_axi_bid = wr_s_bid[S_ID_WIDTH-1:0];

// Refused bursts: the reference path has no error register to report them to. The converters
// still answer them (DECERR, SLVERR), which the IP sees.
wire wr_addr_error, wr_burst_error, rd_addr_error, rd_burst_error;

axi_wr_upsizer #(
    .S_DATA_WIDTH(S_DATA_WIDTH),
    .S_ADDR_WIDTH(S_ADDR_WIDTH),
    .M_DATA_WIDTH(M_DATA_WIDTH),
    .M_ADDR_WIDTH(M_ADDR_WIDTH),
    .ID_WIDTH(M_ID_WIDTH),
    .S_STRB_WIDTH(S_STRB_WIDTH),
    .M_STRB_WIDTH(M_STRB_WIDTH)
)
wr_upsizer_inst (
    .clk(s_clk),
    .rst(s_rst),
    .s_axi_awid(wr_s_awid),
    .s_axi_awaddr(s_axi_awaddr),
    .s_axi_awlen(s_axi_awlen),
    .s_axi_awsize(s_axi_awsize),
    .s_axi_awburst(s_axi_awburst),
    .s_axi_awlock(s_axi_awlock),
    .s_axi_awcache(s_axi_awcache),
    .s_axi_awprot(s_axi_awprot),
    .s_axi_awvalid(s_axi_awvalid),
    .s_axi_awready(s_axi_awready),
    .s_axi_wdata(s_axi_wdata),
    .s_axi_wstrb(s_axi_wstrb),
    .s_axi_wlast(s_axi_wlast),
    .s_axi_wvalid(s_axi_wvalid),
    .s_axi_wready(s_axi_wready),
    .s_axi_bid(wr_s_bid),
    .s_axi_bresp(s_axi_bresp),
    .s_axi_bvalid(s_axi_bvalid),
    .s_axi_bready(s_axi_bready),
    .m_axi_awid(up_awid),
    .m_axi_awaddr(up_awaddr),
    .m_axi_awlen(up_awlen),
    .m_axi_awsize(up_awsize),
    .m_axi_awburst(up_awburst),
    .m_axi_awlock(up_awlock),
    .m_axi_awcache(up_awcache),
    .m_axi_awprot(up_awprot),
    .m_axi_awvalid(up_awvalid),
    .m_axi_awready(up_awready),
    .m_axi_wdata(up_wdata),
    .m_axi_wstrb(up_wstrb),
    .m_axi_wlast(up_wlast),
    .m_axi_wvalid(up_wvalid),
    .m_axi_wready(up_wready),
    .m_axi_bid(up_bid),
    .m_axi_bresp(up_bresp),
    .m_axi_bvalid(up_bvalid),
    .m_axi_bready(up_bready),
    .addr_error(wr_addr_error),
    .burst_error(wr_burst_error)
);

axi_rd_upsizer #(
    .S_DATA_WIDTH(S_DATA_WIDTH),
    .S_ADDR_WIDTH(S_ADDR_WIDTH),
    .S_ID_WIDTH(S_ID_WIDTH),
    .M_DATA_WIDTH(M_DATA_WIDTH),
    .M_ADDR_WIDTH(M_ADDR_WIDTH),
    .M_ID_WIDTH(M_ID_WIDTH),
    .OUTSTANDING(OUTSTANDING)
)
rd_upsizer_inst (
    .clk(s_clk),
    .rst(s_rst),
    .s_axi_arid(s_axi_arid),
    .s_axi_araddr(s_axi_araddr),
    .s_axi_arlen(s_axi_arlen),
    .s_axi_arsize(s_axi_arsize),
    .s_axi_arburst(s_axi_arburst),
    .s_axi_arlock(s_axi_arlock),
    .s_axi_arcache(s_axi_arcache),
    .s_axi_arprot(s_axi_arprot),
    .s_axi_arvalid(s_axi_arvalid),
    .s_axi_arready(s_axi_arready),
    .s_axi_rid(s_axi_rid),
    .s_axi_rdata(s_axi_rdata),
    .s_axi_rresp(s_axi_rresp),
    .s_axi_rlast(s_axi_rlast),
    .s_axi_rvalid(s_axi_rvalid),
    .s_axi_rready(s_axi_rready),
    .m_axi_arid(up_arid),
    .m_axi_araddr(up_araddr),
    .m_axi_arlen(up_arlen),
    .m_axi_arsize(up_arsize),
    .m_axi_arburst(up_arburst),
    .m_axi_arlock(up_arlock),
    .m_axi_arcache(up_arcache),
    .m_axi_arprot(up_arprot),
    .m_axi_arvalid(up_arvalid),
    .m_axi_arready(up_arready),
    .m_axi_rid(up_rid),
    .m_axi_rdata(up_rdata),
    .m_axi_rresp(up_rresp),
    .m_axi_rlast(up_rlast),
    .m_axi_rvalid(up_rvalid),
    .m_axi_rready(up_rready),
    .addr_error(rd_addr_error),
    .burst_error(rd_burst_error),
    // The SmartConnect has no deliberate fault: the converter is built without one.
    .fault_drop_beat_en(1'b0)
);

axi_cdc_wr #(
    .DATA_WIDTH(M_DATA_WIDTH),
    .ADDR_WIDTH(M_ADDR_WIDTH),
    .STRB_WIDTH(M_STRB_WIDTH),
    .ID_WIDTH(M_ID_WIDTH),
    .AW_FIFO_ADDR_WIDTH(FIFO_ADDR_WIDTH),
    .W_FIFO_ADDR_WIDTH(FIFO_ADDR_WIDTH),
    .B_FIFO_ADDR_WIDTH(FIFO_ADDR_WIDTH)
)
cdc_wr_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_axi_awid(up_awid),
    .s_axi_awaddr(up_awaddr),
    .s_axi_awlen(up_awlen),
    .s_axi_awsize(up_awsize),
    .s_axi_awburst(up_awburst),
    .s_axi_awlock(up_awlock),
    .s_axi_awcache(up_awcache),
    .s_axi_awprot(up_awprot),
    .s_axi_awvalid(up_awvalid),
    .s_axi_awready(up_awready),
    .s_axi_wdata(up_wdata),
    .s_axi_wstrb(up_wstrb),
    .s_axi_wlast(up_wlast),
    .s_axi_wvalid(up_wvalid),
    .s_axi_wready(up_wready),
    .s_axi_bid(up_bid),
    .s_axi_bresp(up_bresp),
    .s_axi_bvalid(up_bvalid),
    .s_axi_bready(up_bready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_axi_awid(m_axi_awid),
    .m_axi_awaddr(m_axi_awaddr),
    .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize),
    .m_axi_awburst(m_axi_awburst),
    .m_axi_awlock(m_axi_awlock),
    .m_axi_awcache(m_axi_awcache),
    .m_axi_awprot(m_axi_awprot),
    .m_axi_awvalid(m_axi_awvalid),
    .m_axi_awready(m_axi_awready),
    .m_axi_wdata(m_axi_wdata),
    .m_axi_wstrb(m_axi_wstrb),
    .m_axi_wlast(m_axi_wlast),
    .m_axi_wvalid(m_axi_wvalid),
    .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid),
    .m_axi_bresp(m_axi_bresp),
    .m_axi_bvalid(m_axi_bvalid),
    .m_axi_bready(m_axi_bready)
);

axi_cdc_rd #(
    .DATA_WIDTH(M_DATA_WIDTH),
    .ADDR_WIDTH(M_ADDR_WIDTH),
    .ID_WIDTH(M_ID_WIDTH),
    .AR_FIFO_ADDR_WIDTH(FIFO_ADDR_WIDTH),
    .R_FIFO_ADDR_WIDTH(FIFO_ADDR_WIDTH)
)
cdc_rd_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_axi_arid(up_arid),
    .s_axi_araddr(up_araddr),
    .s_axi_arlen(up_arlen),
    .s_axi_arsize(up_arsize),
    .s_axi_arburst(up_arburst),
    .s_axi_arlock(up_arlock),
    .s_axi_arcache(up_arcache),
    .s_axi_arprot(up_arprot),
    .s_axi_arvalid(up_arvalid),
    .s_axi_arready(up_arready),
    .s_axi_rid(up_rid),
    .s_axi_rdata(up_rdata),
    .s_axi_rresp(up_rresp),
    .s_axi_rlast(up_rlast),
    .s_axi_rvalid(up_rvalid),
    .s_axi_rready(up_rready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_axi_arid(m_axi_arid),
    .m_axi_araddr(m_axi_araddr),
    .m_axi_arlen(m_axi_arlen),
    .m_axi_arsize(m_axi_arsize),
    .m_axi_arburst(m_axi_arburst),
    .m_axi_arlock(m_axi_arlock),
    .m_axi_arcache(m_axi_arcache),
    .m_axi_arprot(m_axi_arprot),
    .m_axi_arvalid(m_axi_arvalid),
    .m_axi_arready(m_axi_arready),
    .m_axi_rid(m_axi_rid),
    .m_axi_rdata(m_axi_rdata),
    .m_axi_rresp(m_axi_rresp),
    .m_axi_rlast(m_axi_rlast),
    .m_axi_rvalid(m_axi_rvalid),
    .m_axi_rready(m_axi_rready)
);

wire unused = &{1'b0, wr_s_bid, wr_addr_error, wr_burst_error, rd_addr_error, rd_burst_error,
    1'b0};

endmodule

`resetall
