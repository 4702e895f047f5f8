/*
 * The card's memory-mapped path: the DMA engine's AXI4 master (s_axi, 128-bit, axi_aclk) and
 * the capture writer (s_axi_cap, write-only) reach the DDR controller's 512-bit AXI4 port in
 * the ddr_clk domain.
 *
 *   s_axi AW/W/B ----+
 *                    +-- axi_wr_arbiter -- axi_wr_upsizer -- axi_cdc_wr --+
 *   s_axi_cap -------+   (burst-fair)      (128 -> 512)      (async FIFOs)  +-- m_axi_ddr
 *   s_axi AR/R --------------------------- axi_rd_upsizer -- axi_cdc_rd --+
 *                                          (128 -> 512)      (async FIFOs)
 *
 * - Writes and reads are separate paths and proceed concurrently.
 * - Write bursts of both sources are granted whole and alternately when both wait; the DDR
 *   write ID is {source, s_axi ID} (source 1 = capture), so responses go back to the right
 *   source with the right ID.
 * - Up to READ_OUTSTANDING read bursts are in flight; read data returns in issue order, which
 *   keeps AXI's order per ID.
 * - Each 128-bit burst (any start address, 1 to 256 beats, INCR, any strobes, narrow sizes)
 *   becomes one 512-bit burst over the same bytes; bytes not strobed are not written.
 * - Clock crossings are async_fifo instances only (Gray pointers, two-flop synchronizers);
 *   no combinational path crosses the domains. Outputs towards both sides are registers,
 *   except the W/B multiplexer of the arbiter and the B pass-through of the upsizer, whose
 *   values come from registers of this clock domain.
 * - Address: a burst at or above 2**DDR_ADDR_WIDTH (outside the DDR) gets DECERR and a FIXED
 *   or WRAP burst SLVERR, from the upsizers, with nothing reaching the DDR; addr_error and
 *   burst_error pulse for each (the register file's ERROR bits).
 *
 * Throughput limits (simple rather than clever):
 * - Writes: one 128-bit beat per clk cycle within a burst (4 GB/s at 250 MHz), plus 3 idle
 *   clk cycles between bursts by design (arbiter: decide, accept, hand over the address), so
 *   16-beat bursts run at most at 16/19 = 84 %, 256-beat bursts at 99 %. Only one write burst
 *   is converted at a time. (Figures from the state machines, not measured.)
 * - Reads: one 128-bit beat per clk cycle; at most READ_OUTSTANDING bursts in flight, so a
 *   read stream of short bursts is bounded by READ_OUTSTANDING bursts per round trip (clock
 *   crossing twice plus the DDR latency).
 * - The DDR side moves at most one 512-bit beat per ddr_clk cycle (12.8 GB/s), well above
 *   either 128-bit source.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_mm_path #
(
    // s_axi and s_axi_cap data width in bits
    parameter DATA_WIDTH = 128,
    // s_axi and s_axi_cap byte address width in bits
    parameter ADDR_WIDTH = 64,
    // s_axi ID width
    parameter ID_WIDTH = 4,
    // m_axi_ddr data width in bits
    parameter DDR_DATA_WIDTH = 512,
    // m_axi_ddr byte address width in bits (31: 2 GiB)
    parameter DDR_ADDR_WIDTH = 31,
    // m_axi_ddr ID width: one more bit than ID_WIDTH, to tell capture from DMA bursts
    parameter DDR_ID_WIDTH = 5,
    // Write strobe width of the slaves
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Write strobe width of the DDR master
    parameter DDR_STRB_WIDTH = (DDR_DATA_WIDTH/8),
    // Read bursts in flight at once (a power of two)
    parameter READ_OUTSTANDING = 8,
    // log2 of the depth of the DDR-side data FIFOs (W and R, in 512-bit beats)
    parameter DATA_FIFO_ADDR_WIDTH = 4,
    // Deliberate fault of the read width converter for the host suite's broken-card test
    // (axi_rd_upsizer's FAULT_DROP_BEAT): 1 builds its logic, which fault_rd_drop_beat_en
    // turns on; 0 in every real build (no fault logic)
    parameter FAULT_RD_DROP_BEAT = 0
)
(
    input  wire                        clk,
    input  wire                        rst,
    input  wire                        ddr_clk,
    input  wire                        ddr_rst,

    /*
     * AXI4 slave: the DMA engine's memory-mapped master (clk domain)
     */
    input  wire [ID_WIDTH-1:0]         s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]       s_axi_awaddr,
    input  wire [7:0]                  s_axi_awlen,
    input  wire [2:0]                  s_axi_awsize,
    input  wire [1:0]                  s_axi_awburst,
    input  wire                        s_axi_awlock,
    input  wire [3:0]                  s_axi_awcache,
    input  wire [2:0]                  s_axi_awprot,
    input  wire                        s_axi_awvalid,
    output wire                        s_axi_awready,
    input  wire [DATA_WIDTH-1:0]       s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]       s_axi_wstrb,
    input  wire                        s_axi_wlast,
    input  wire                        s_axi_wvalid,
    output wire                        s_axi_wready,
    output wire [ID_WIDTH-1:0]         s_axi_bid,
    output wire [1:0]                  s_axi_bresp,
    output wire                        s_axi_bvalid,
    input  wire                        s_axi_bready,
    input  wire [ID_WIDTH-1:0]         s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]       s_axi_araddr,
    input  wire [7:0]                  s_axi_arlen,
    input  wire [2:0]                  s_axi_arsize,
    input  wire [1:0]                  s_axi_arburst,
    input  wire                        s_axi_arlock,
    input  wire [3:0]                  s_axi_arcache,
    input  wire [2:0]                  s_axi_arprot,
    input  wire                        s_axi_arvalid,
    output wire                        s_axi_arready,
    output wire [ID_WIDTH-1:0]         s_axi_rid,
    output wire [DATA_WIDTH-1:0]       s_axi_rdata,
    output wire [1:0]                  s_axi_rresp,
    output wire                        s_axi_rlast,
    output wire                        s_axi_rvalid,
    input  wire                        s_axi_rready,

    /*
     * AXI4 write-only slave: the capture writer (clk domain)
     */
    input  wire [ADDR_WIDTH-1:0]       s_axi_cap_awaddr,
    input  wire [7:0]                  s_axi_cap_awlen,
    input  wire [2:0]                  s_axi_cap_awsize,
    input  wire [1:0]                  s_axi_cap_awburst,
    input  wire                        s_axi_cap_awvalid,
    output wire                        s_axi_cap_awready,
    input  wire [DATA_WIDTH-1:0]       s_axi_cap_wdata,
    input  wire [STRB_WIDTH-1:0]       s_axi_cap_wstrb,
    input  wire                        s_axi_cap_wlast,
    input  wire                        s_axi_cap_wvalid,
    output wire                        s_axi_cap_wready,
    output wire [1:0]                  s_axi_cap_bresp,
    output wire                        s_axi_cap_bvalid,
    input  wire                        s_axi_cap_bready,

    /*
     * AXI4 master to the DDR controller (ddr_clk domain)
     */
    output wire [DDR_ID_WIDTH-1:0]     m_axi_ddr_awid,
    output wire [DDR_ADDR_WIDTH-1:0]   m_axi_ddr_awaddr,
    output wire [7:0]                  m_axi_ddr_awlen,
    output wire [2:0]                  m_axi_ddr_awsize,
    output wire [1:0]                  m_axi_ddr_awburst,
    output wire                        m_axi_ddr_awlock,
    output wire [3:0]                  m_axi_ddr_awcache,
    output wire [2:0]                  m_axi_ddr_awprot,
    output wire                        m_axi_ddr_awvalid,
    input  wire                        m_axi_ddr_awready,
    output wire [DDR_DATA_WIDTH-1:0]   m_axi_ddr_wdata,
    output wire [DDR_STRB_WIDTH-1:0]   m_axi_ddr_wstrb,
    output wire                        m_axi_ddr_wlast,
    output wire                        m_axi_ddr_wvalid,
    input  wire                        m_axi_ddr_wready,
    input  wire [DDR_ID_WIDTH-1:0]     m_axi_ddr_bid,
    input  wire [1:0]                  m_axi_ddr_bresp,
    input  wire                        m_axi_ddr_bvalid,
    output wire                        m_axi_ddr_bready,
    output wire [DDR_ID_WIDTH-1:0]     m_axi_ddr_arid,
    output wire [DDR_ADDR_WIDTH-1:0]   m_axi_ddr_araddr,
    output wire [7:0]                  m_axi_ddr_arlen,
    output wire [2:0]                  m_axi_ddr_arsize,
    output wire [1:0]                  m_axi_ddr_arburst,
    output wire                        m_axi_ddr_arlock,
    output wire [3:0]                  m_axi_ddr_arcache,
    output wire [2:0]                  m_axi_ddr_arprot,
    output wire                        m_axi_ddr_arvalid,
    input  wire                        m_axi_ddr_arready,
    input  wire [DDR_ID_WIDTH-1:0]     m_axi_ddr_rid,
    input  wire [DDR_DATA_WIDTH-1:0]   m_axi_ddr_rdata,
    input  wire [1:0]                  m_axi_ddr_rresp,
    input  wire                        m_axi_ddr_rlast,
    input  wire                        m_axi_ddr_rvalid,
    output wire                        m_axi_ddr_rready,

    /*
     * Refused bursts (clk domain, one-cycle pulses)
     */
    output wire                        addr_error,
    output wire                        burst_error,

    /*
     * Deliberate fault enable (clk domain, held constant from before reset; FAULT_RD_DROP_BEAT
     * builds only)
     */
    input  wire                        fault_rd_drop_beat_en
);

// check configuration
initial begin
    if (DDR_ID_WIDTH != ID_WIDTH + 1) begin
        $error("Error: DDR_ID_WIDTH must be ID_WIDTH + 1 (instance %m)");
        $finish;
    end

    if (STRB_WIDTH * 8 != DATA_WIDTH || DDR_STRB_WIDTH * 8 != DDR_DATA_WIDTH) begin
        $error("Error: strobe widths must be data widths / 8 (instance %m)");
        $finish;
    end

    if (DDR_DATA_WIDTH <= DATA_WIDTH || ADDR_WIDTH <= DDR_ADDR_WIDTH) begin
        $error("Error: the DDR port must be wider and its address narrower than the slaves' (instance %m)");
        $finish;
    end
end

/*
 * Arbiter -> write upsizer (clk domain, slave width)
 */
wire [DDR_ID_WIDTH-1:0]       arb_awid;
wire [ADDR_WIDTH-1:0]         arb_awaddr;
wire [7:0]                    arb_awlen;
wire [2:0]                    arb_awsize;
wire [1:0]                    arb_awburst;
wire                          arb_awlock;
wire [3:0]                    arb_awcache;
wire [2:0]                    arb_awprot;
wire                          arb_awvalid;
wire                          arb_awready;
wire [DATA_WIDTH-1:0]         arb_wdata;
wire [STRB_WIDTH-1:0]         arb_wstrb;
wire                          arb_wlast;
wire                          arb_wvalid;
wire                          arb_wready;
wire [DDR_ID_WIDTH-1:0]       arb_bid;
wire [1:0]                    arb_bresp;
wire                          arb_bvalid;
wire                          arb_bready;

/*
 * Write upsizer -> write crossing (clk domain, DDR width)
 */
wire [DDR_ID_WIDTH-1:0]       wr_awid;
wire [DDR_ADDR_WIDTH-1:0]     wr_awaddr;
wire [7:0]                    wr_awlen;
wire [2:0]                    wr_awsize;
wire [1:0]                    wr_awburst;
wire                          wr_awlock;
wire [3:0]                    wr_awcache;
wire [2:0]                    wr_awprot;
wire                          wr_awvalid;
wire                          wr_awready;
wire [DDR_DATA_WIDTH-1:0]     wr_wdata;
wire [DDR_STRB_WIDTH-1:0]     wr_wstrb;
wire                          wr_wlast;
wire                          wr_wvalid;
wire                          wr_wready;
wire [DDR_ID_WIDTH-1:0]       wr_bid;
wire [1:0]                    wr_bresp;
wire                          wr_bvalid;
wire                          wr_bready;

/*
 * Read upsizer -> read crossing (clk domain, DDR width)
 */
wire [DDR_ID_WIDTH-1:0]       rd_arid;
wire [DDR_ADDR_WIDTH-1:0]     rd_araddr;
wire [7:0]                    rd_arlen;
wire [2:0]                    rd_arsize;
wire [1:0]                    rd_arburst;
wire                          rd_arlock;
wire [3:0]                    rd_arcache;
wire [2:0]                    rd_arprot;
wire                          rd_arvalid;
wire                          rd_arready;
wire [DDR_ID_WIDTH-1:0]       rd_rid;
wire [DDR_DATA_WIDTH-1:0]     rd_rdata;
wire [1:0]                    rd_rresp;
wire                          rd_rlast;
wire                          rd_rvalid;
wire                          rd_rready;

wire wr_addr_error;
wire wr_burst_error;
wire rd_addr_error;
wire rd_burst_error;

assign addr_error = wr_addr_error || rd_addr_error;
assign burst_error = wr_burst_error || rd_burst_error;

axi_wr_arbiter #(
    .DATA_WIDTH(DATA_WIDTH),
    .ADDR_WIDTH(ADDR_WIDTH),
    .STRB_WIDTH(STRB_WIDTH),
    .ID_WIDTH(ID_WIDTH)
)
wr_arbiter_inst (
    .clk(clk),
    .rst(rst),
    .s_axi_awid(s_axi_awid),
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
    .s_axi_bid(s_axi_bid),
    .s_axi_bresp(s_axi_bresp),
    .s_axi_bvalid(s_axi_bvalid),
    .s_axi_bready(s_axi_bready),
    .s_axi_cap_awaddr(s_axi_cap_awaddr),
    .s_axi_cap_awlen(s_axi_cap_awlen),
    .s_axi_cap_awsize(s_axi_cap_awsize),
    .s_axi_cap_awburst(s_axi_cap_awburst),
    .s_axi_cap_awvalid(s_axi_cap_awvalid),
    .s_axi_cap_awready(s_axi_cap_awready),
    .s_axi_cap_wdata(s_axi_cap_wdata),
    .s_axi_cap_wstrb(s_axi_cap_wstrb),
    .s_axi_cap_wlast(s_axi_cap_wlast),
    .s_axi_cap_wvalid(s_axi_cap_wvalid),
    .s_axi_cap_wready(s_axi_cap_wready),
    .s_axi_cap_bresp(s_axi_cap_bresp),
    .s_axi_cap_bvalid(s_axi_cap_bvalid),
    .s_axi_cap_bready(s_axi_cap_bready),
    .m_axi_awid(arb_awid),
    .m_axi_awaddr(arb_awaddr),
    .m_axi_awlen(arb_awlen),
    .m_axi_awsize(arb_awsize),
    .m_axi_awburst(arb_awburst),
    .m_axi_awlock(arb_awlock),
    .m_axi_awcache(arb_awcache),
    .m_axi_awprot(arb_awprot),
    .m_axi_awvalid(arb_awvalid),
    .m_axi_awready(arb_awready),
    .m_axi_wdata(arb_wdata),
    .m_axi_wstrb(arb_wstrb),
    .m_axi_wlast(arb_wlast),
    .m_axi_wvalid(arb_wvalid),
    .m_axi_wready(arb_wready),
    .m_axi_bid(arb_bid),
    .m_axi_bresp(arb_bresp),
    .m_axi_bvalid(arb_bvalid),
    .m_axi_bready(arb_bready)
);

axi_wr_upsizer #(
    .S_DATA_WIDTH(DATA_WIDTH),
    .S_ADDR_WIDTH(ADDR_WIDTH),
    .M_DATA_WIDTH(DDR_DATA_WIDTH),
    .M_ADDR_WIDTH(DDR_ADDR_WIDTH),
    .ID_WIDTH(DDR_ID_WIDTH),
    .S_STRB_WIDTH(STRB_WIDTH),
    .M_STRB_WIDTH(DDR_STRB_WIDTH)
)
wr_upsizer_inst (
    .clk(clk),
    .rst(rst),
    .s_axi_awid(arb_awid),
    .s_axi_awaddr(arb_awaddr),
    .s_axi_awlen(arb_awlen),
    .s_axi_awsize(arb_awsize),
    .s_axi_awburst(arb_awburst),
    .s_axi_awlock(arb_awlock),
    .s_axi_awcache(arb_awcache),
    .s_axi_awprot(arb_awprot),
    .s_axi_awvalid(arb_awvalid),
    .s_axi_awready(arb_awready),
    .s_axi_wdata(arb_wdata),
    .s_axi_wstrb(arb_wstrb),
    .s_axi_wlast(arb_wlast),
    .s_axi_wvalid(arb_wvalid),
    .s_axi_wready(arb_wready),
    .s_axi_bid(arb_bid),
    .s_axi_bresp(arb_bresp),
    .s_axi_bvalid(arb_bvalid),
    .s_axi_bready(arb_bready),
    .m_axi_awid(wr_awid),
    .m_axi_awaddr(wr_awaddr),
    .m_axi_awlen(wr_awlen),
    .m_axi_awsize(wr_awsize),
    .m_axi_awburst(wr_awburst),
    .m_axi_awlock(wr_awlock),
    .m_axi_awcache(wr_awcache),
    .m_axi_awprot(wr_awprot),
    .m_axi_awvalid(wr_awvalid),
    .m_axi_awready(wr_awready),
    .m_axi_wdata(wr_wdata),
    .m_axi_wstrb(wr_wstrb),
    .m_axi_wlast(wr_wlast),
    .m_axi_wvalid(wr_wvalid),
    .m_axi_wready(wr_wready),
    .m_axi_bid(wr_bid),
    .m_axi_bresp(wr_bresp),
    .m_axi_bvalid(wr_bvalid),
    .m_axi_bready(wr_bready),
    .addr_error(wr_addr_error),
    .burst_error(wr_burst_error)
);

axi_cdc_wr #(
    .DATA_WIDTH(DDR_DATA_WIDTH),
    .ADDR_WIDTH(DDR_ADDR_WIDTH),
    .STRB_WIDTH(DDR_STRB_WIDTH),
    .ID_WIDTH(DDR_ID_WIDTH),
    .W_FIFO_ADDR_WIDTH(DATA_FIFO_ADDR_WIDTH)
)
cdc_wr_inst (
    .s_clk(clk),
    .s_rst(rst),
    .s_axi_awid(wr_awid),
    .s_axi_awaddr(wr_awaddr),
    .s_axi_awlen(wr_awlen),
    .s_axi_awsize(wr_awsize),
    .s_axi_awburst(wr_awburst),
    .s_axi_awlock(wr_awlock),
    .s_axi_awcache(wr_awcache),
    .s_axi_awprot(wr_awprot),
    .s_axi_awvalid(wr_awvalid),
    .s_axi_awready(wr_awready),
    .s_axi_wdata(wr_wdata),
    .s_axi_wstrb(wr_wstrb),
    .s_axi_wlast(wr_wlast),
    .s_axi_wvalid(wr_wvalid),
    .s_axi_wready(wr_wready),
    .s_axi_bid(wr_bid),
    .s_axi_bresp(wr_bresp),
    .s_axi_bvalid(wr_bvalid),
    .s_axi_bready(wr_bready),
    .m_clk(ddr_clk),
    .m_rst(ddr_rst),
    .m_axi_awid(m_axi_ddr_awid),
    .m_axi_awaddr(m_axi_ddr_awaddr),
    .m_axi_awlen(m_axi_ddr_awlen),
    .m_axi_awsize(m_axi_ddr_awsize),
    .m_axi_awburst(m_axi_ddr_awburst),
    .m_axi_awlock(m_axi_ddr_awlock),
    .m_axi_awcache(m_axi_ddr_awcache),
    .m_axi_awprot(m_axi_ddr_awprot),
    .m_axi_awvalid(m_axi_ddr_awvalid),
    .m_axi_awready(m_axi_ddr_awready),
    .m_axi_wdata(m_axi_ddr_wdata),
    .m_axi_wstrb(m_axi_ddr_wstrb),
    .m_axi_wlast(m_axi_ddr_wlast),
    .m_axi_wvalid(m_axi_ddr_wvalid),
    .m_axi_wready(m_axi_ddr_wready),
    .m_axi_bid(m_axi_ddr_bid),
    .m_axi_bresp(m_axi_ddr_bresp),
    .m_axi_bvalid(m_axi_ddr_bvalid),
    .m_axi_bready(m_axi_ddr_bready)
);

axi_rd_upsizer #(
    .S_DATA_WIDTH(DATA_WIDTH),
    .S_ADDR_WIDTH(ADDR_WIDTH),
    .S_ID_WIDTH(ID_WIDTH),
    .M_DATA_WIDTH(DDR_DATA_WIDTH),
    .M_ADDR_WIDTH(DDR_ADDR_WIDTH),
    .M_ID_WIDTH(DDR_ID_WIDTH),
    .OUTSTANDING(READ_OUTSTANDING),
    .FAULT_DROP_BEAT(FAULT_RD_DROP_BEAT)
)
rd_upsizer_inst (
    .clk(clk),
    .rst(rst),
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
    .m_axi_arid(rd_arid),
    .m_axi_araddr(rd_araddr),
    .m_axi_arlen(rd_arlen),
    .m_axi_arsize(rd_arsize),
    .m_axi_arburst(rd_arburst),
    .m_axi_arlock(rd_arlock),
    .m_axi_arcache(rd_arcache),
    .m_axi_arprot(rd_arprot),
    .m_axi_arvalid(rd_arvalid),
    .m_axi_arready(rd_arready),
    .m_axi_rid(rd_rid),
    .m_axi_rdata(rd_rdata),
    .m_axi_rresp(rd_rresp),
    .m_axi_rlast(rd_rlast),
    .m_axi_rvalid(rd_rvalid),
    .m_axi_rready(rd_rready),
    .addr_error(rd_addr_error),
    .burst_error(rd_burst_error),
    .fault_drop_beat_en(fault_rd_drop_beat_en)
);

axi_cdc_rd #(
    .DATA_WIDTH(DDR_DATA_WIDTH),
    .ADDR_WIDTH(DDR_ADDR_WIDTH),
    .ID_WIDTH(DDR_ID_WIDTH),
    .R_FIFO_ADDR_WIDTH(DATA_FIFO_ADDR_WIDTH)
)
cdc_rd_inst (
    .s_clk(clk),
    .s_rst(rst),
    .s_axi_arid(rd_arid),
    .s_axi_araddr(rd_araddr),
    .s_axi_arlen(rd_arlen),
    .s_axi_arsize(rd_arsize),
    .s_axi_arburst(rd_arburst),
    .s_axi_arlock(rd_arlock),
    .s_axi_arcache(rd_arcache),
    .s_axi_arprot(rd_arprot),
    .s_axi_arvalid(rd_arvalid),
    .s_axi_arready(rd_arready),
    .s_axi_rid(rd_rid),
    .s_axi_rdata(rd_rdata),
    .s_axi_rresp(rd_rresp),
    .s_axi_rlast(rd_rlast),
    .s_axi_rvalid(rd_rvalid),
    .s_axi_rready(rd_rready),
    .m_clk(ddr_clk),
    .m_rst(ddr_rst),
    .m_axi_arid(m_axi_ddr_arid),
    .m_axi_araddr(m_axi_ddr_araddr),
    .m_axi_arlen(m_axi_ddr_arlen),
    .m_axi_arsize(m_axi_ddr_arsize),
    .m_axi_arburst(m_axi_ddr_arburst),
    .m_axi_arlock(m_axi_ddr_arlock),
    .m_axi_arcache(m_axi_ddr_arcache),
    .m_axi_arprot(m_axi_ddr_arprot),
    .m_axi_arvalid(m_axi_ddr_arvalid),
    .m_axi_arready(m_axi_ddr_arready),
    .m_axi_rid(m_axi_ddr_rid),
    .m_axi_rdata(m_axi_ddr_rdata),
    .m_axi_rresp(m_axi_ddr_rresp),
    .m_axi_rlast(m_axi_ddr_rlast),
    .m_axi_rvalid(m_axi_ddr_rvalid),
    .m_axi_rready(m_axi_ddr_rready)
);

endmodule

`resetall
