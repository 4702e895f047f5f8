/*
 * The simulated card: card_core with the DDR3 model on its DDR port.
 *
 * This is the model that card-sim builds for the host side. Every port is card_core's, named
 * as card_core names it (and as the XDMA IP sees it); the DDR port is internal, and tests reach
 * the DDR contents through the model's backdoor.
 *
 * VARIANT is card_core's: 1 mm, 2 stream (no DDR, so no DDR3 model: the backdoor finds no
 * memory), 3 both (the default, simulation only). Every variant has every port; the ones a
 * variant lacks are tied off inside card_core, and CAPS says which are live.
 *
 * PATH chooses what lies between the DMA engine's memory-mapped master and the DDR3 model:
 *   0 the card's own path: card_core's axi_mm_path (write arbiter with the capture writer,
 *     width converters, clock crossings), what the card's bitstream has;
 *   1 the reference path: the bare memory path of the board behind ../shared/reference
 *     (XDMA M_AXI -> AXI SmartConnect -> MIG S_AXI), axi_smartconnect_model straight into the
 *     DDR3 model. card_core still serves the user BAR and the streams, but its own
 *     memory-mapped slave sees no traffic and its DDR master gets no ready: the capture ring
 *     is not available on this path.
 *   2 the tap: the DMA master's port goes out of the top unchanged as m_axi_tap, for a slave
 *     model of the test's own (a randomizing slave fuzzing the XDMA IP model's master), with
 *     no memory behind it on the card; card_core's memory-mapped slave sees no traffic, as on
 *     the reference path. On paths 0 and 1 m_axi_tap's outputs are 0 and its inputs unused.
 *
 * ddr_arb_algorithm, ddr_awqos and ddr_arqos are held constant by the harness
 * (crates/card-harness's CardSetup::set_ddr_controller, which the simulated card calls with its
 * [sim.ddr] settings; only the harness names these ports): the MIG model's read/write
 * arbitration scheme and the AxQOS its AXI port sees (0 unless a what-if sets them).
 *
 * sim_fault_* are the deliberate faults of the host suite's broken-card tests, held constant
 * by the harness from before reset: card_core is built here with their logic (FAULT_*), and
 * each input turns one on, so one build is both the good card (all 0, as they start) and the
 * broken ones (crates/card-harness's Fault names them).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module sim_top #
(
    // card_core's VARIANT: 1 mm, 2 stream, 3 combined (simulation only)
    parameter VARIANT = 3,
    // Memory-mapped path to the DDR3 model: 0 card_core's own, 1 the reference board's
    // (SmartConnect model), 2 none: the DMA master's port is the top's m_axi_tap
    parameter PATH = 0,
    // Width of the user BAR byte address in bits
    parameter AXIL_ADDR_WIDTH = 16,
    // Width of the DMA memory-mapped data bus in bits
    parameter AXI_DATA_WIDTH = 128,
    // Width of the DMA memory-mapped address bus in bits
    parameter AXI_ADDR_WIDTH = 64,
    // Width of the DMA memory-mapped ID in bits
    parameter AXI_ID_WIDTH = 4,
    // Width of the stream data in bits
    parameter AXIS_DATA_WIDTH = 128,
    // Width of the DDR controller data bus in bits
    parameter DDR_DATA_WIDTH = 512,
    // Width of the DDR controller address bus in bits (2 GiB)
    parameter DDR_ADDR_WIDTH = 31,
    // Width of the DDR controller ID in bits
    parameter DDR_ID_WIDTH = AXI_ID_WIDTH + 1,
    // Deliberate faults for the host suite's broken-card tests (card_core's FAULT_*), built in
    // and turned on by the sim_fault_* inputs: 1 builds the read width converter's dropped
    // beat (sim_fault_rd_drop_beat); 0 leaves its logic out
    parameter FAULT_RD_DROP_BEAT = 1,
    // Every N-th frame of a source repeats the previous sequence number while
    // sim_fault_seq_repeat is high; 0 leaves the logic out
    parameter FAULT_SEQ_REPEAT = 1000
)
(
    input  wire                          axi_aclk,
    input  wire                          axi_aresetn,

    /*
     * AXI4 slave: the DMA engine's memory-mapped master
     */
    input  wire [AXI_ID_WIDTH-1:0]       s_axi_awid,
    input  wire [AXI_ADDR_WIDTH-1:0]     s_axi_awaddr,
    input  wire [7:0]                    s_axi_awlen,
    input  wire [2:0]                    s_axi_awsize,
    input  wire [1:0]                    s_axi_awburst,
    input  wire                          s_axi_awlock,
    input  wire [3:0]                    s_axi_awcache,
    input  wire [2:0]                    s_axi_awprot,
    input  wire                          s_axi_awvalid,
    output wire                          s_axi_awready,
    input  wire [AXI_DATA_WIDTH-1:0]     s_axi_wdata,
    input  wire [AXI_DATA_WIDTH/8-1:0]   s_axi_wstrb,
    input  wire                          s_axi_wlast,
    input  wire                          s_axi_wvalid,
    output wire                          s_axi_wready,
    output wire [AXI_ID_WIDTH-1:0]       s_axi_bid,
    output wire [1:0]                    s_axi_bresp,
    output wire                          s_axi_bvalid,
    input  wire                          s_axi_bready,
    input  wire [AXI_ID_WIDTH-1:0]       s_axi_arid,
    input  wire [AXI_ADDR_WIDTH-1:0]     s_axi_araddr,
    input  wire [7:0]                    s_axi_arlen,
    input  wire [2:0]                    s_axi_arsize,
    input  wire [1:0]                    s_axi_arburst,
    input  wire                          s_axi_arlock,
    input  wire [3:0]                    s_axi_arcache,
    input  wire [2:0]                    s_axi_arprot,
    input  wire                          s_axi_arvalid,
    output wire                          s_axi_arready,
    output wire [AXI_ID_WIDTH-1:0]       s_axi_rid,
    output wire [AXI_DATA_WIDTH-1:0]     s_axi_rdata,
    output wire [1:0]                    s_axi_rresp,
    output wire                          s_axi_rlast,
    output wire                          s_axi_rvalid,
    input  wire                          s_axi_rready,

    /*
     * AXI4-Lite slave: the user BAR
     */
    input  wire [AXIL_ADDR_WIDTH-1:0]    s_axil_awaddr,
    input  wire [2:0]                    s_axil_awprot,
    input  wire                          s_axil_awvalid,
    output wire                          s_axil_awready,
    input  wire [31:0]                   s_axil_wdata,
    input  wire [3:0]                    s_axil_wstrb,
    input  wire                          s_axil_wvalid,
    output wire                          s_axil_wready,
    output wire [1:0]                    s_axil_bresp,
    output wire                          s_axil_bvalid,
    input  wire                          s_axil_bready,
    input  wire [AXIL_ADDR_WIDTH-1:0]    s_axil_araddr,
    input  wire [2:0]                    s_axil_arprot,
    input  wire                          s_axil_arvalid,
    output wire                          s_axil_arready,
    output wire [31:0]                   s_axil_rdata,
    output wire [1:0]                    s_axil_rresp,
    output wire                          s_axil_rvalid,
    input  wire                          s_axil_rready,

    /*
     * AXI-Stream from the host (H2C channel 0)
     */
    input  wire [AXIS_DATA_WIDTH-1:0]    s_axis_h2c0_tdata,
    input  wire [AXIS_DATA_WIDTH/8-1:0]  s_axis_h2c0_tkeep,
    input  wire                          s_axis_h2c0_tlast,
    input  wire                          s_axis_h2c0_tvalid,
    output wire                          s_axis_h2c0_tready,

    /*
     * AXI-Stream to the host (C2H channels 0 and 1)
     */
    output wire [AXIS_DATA_WIDTH-1:0]    m_axis_c2h0_tdata,
    output wire [AXIS_DATA_WIDTH/8-1:0]  m_axis_c2h0_tkeep,
    output wire                          m_axis_c2h0_tlast,
    output wire                          m_axis_c2h0_tvalid,
    input  wire                          m_axis_c2h0_tready,
    output wire [AXIS_DATA_WIDTH-1:0]    m_axis_c2h1_tdata,
    output wire [AXIS_DATA_WIDTH/8-1:0]  m_axis_c2h1_tkeep,
    output wire                          m_axis_c2h1_tlast,
    output wire                          m_axis_c2h1_tvalid,
    input  wire                          m_axis_c2h1_tready,

    /*
     * The DMA master's port passed out of the top on PATH 2 (the tap), for a slave model
     */
    output wire [AXI_ID_WIDTH-1:0]           m_axi_tap_awid,
    output wire [AXI_ADDR_WIDTH-1:0]         m_axi_tap_awaddr,
    output wire [7:0]                        m_axi_tap_awlen,
    output wire [2:0]                        m_axi_tap_awsize,
    output wire [1:0]                        m_axi_tap_awburst,
    output wire                              m_axi_tap_awlock,
    output wire [3:0]                        m_axi_tap_awcache,
    output wire [2:0]                        m_axi_tap_awprot,
    output wire                              m_axi_tap_awvalid,
    input  wire                              m_axi_tap_awready,
    output wire [AXI_DATA_WIDTH-1:0]         m_axi_tap_wdata,
    output wire [AXI_DATA_WIDTH/8-1:0]       m_axi_tap_wstrb,
    output wire                              m_axi_tap_wlast,
    output wire                              m_axi_tap_wvalid,
    input  wire                              m_axi_tap_wready,
    input  wire [AXI_ID_WIDTH-1:0]           m_axi_tap_bid,
    input  wire [1:0]                        m_axi_tap_bresp,
    input  wire                              m_axi_tap_bvalid,
    output wire                              m_axi_tap_bready,
    output wire [AXI_ID_WIDTH-1:0]           m_axi_tap_arid,
    output wire [AXI_ADDR_WIDTH-1:0]         m_axi_tap_araddr,
    output wire [7:0]                        m_axi_tap_arlen,
    output wire [2:0]                        m_axi_tap_arsize,
    output wire [1:0]                        m_axi_tap_arburst,
    output wire                              m_axi_tap_arlock,
    output wire [3:0]                        m_axi_tap_arcache,
    output wire [2:0]                        m_axi_tap_arprot,
    output wire                              m_axi_tap_arvalid,
    input  wire                              m_axi_tap_arready,
    input  wire [AXI_ID_WIDTH-1:0]           m_axi_tap_rid,
    input  wire [AXI_DATA_WIDTH-1:0]         m_axi_tap_rdata,
    input  wire [1:0]                        m_axi_tap_rresp,
    input  wire                              m_axi_tap_rlast,
    input  wire                              m_axi_tap_rvalid,
    output wire                              m_axi_tap_rready,

    /*
     * User interrupt (XDMA handshake: the request is held until acknowledged)
     */
    output wire                          usr_irq_req,
    input  wire                          usr_irq_ack,

    /*
     * DDR controller user clock and its synchronous reset (active high)
     */
    input  wire                          ddr_clk,
    input  wire                          ddr_rst,

    /*
     * DDR controller settings, held constant: arbitration scheme (0 RD_PRI_REG, 1 ROUND_ROBIN,
     * 2 TDM) and the AxQOS of writes and reads
     */
    input  wire [1:0]                    ddr_arb_algorithm,
    input  wire [3:0]                    ddr_awqos,
    input  wire [3:0]                    ddr_arqos,

    /*
     * Deliberate faults, simulation only, held constant from before reset: 1 turns on the
     * read width converter's dropped beat, the frame sources' repeated sequence number; 0 (as
     * they start) is the card as built
     */
    input  wire                          sim_fault_rd_drop_beat,
    input  wire                          sim_fault_seq_repeat
);

// check configuration
initial begin
    if (VARIANT < 1 || VARIANT > 3) begin
        $error("Error: VARIANT must be 1 (mm), 2 (stream) or 3 (combined) (instance %m)");
        $finish;
    end

    if (PATH < 0 || PATH > 2) begin
        $error("Error: PATH must be 0 (card_core), 1 (reference) or 2 (tap) (instance %m)");
        $finish;
    end

    if (DDR_ID_WIDTH != AXI_ID_WIDTH + 1) begin
        $error("Error: DDR_ID_WIDTH must be AXI_ID_WIDTH + 1 (instance %m)");
        $finish;
    end
end

wire [DDR_ID_WIDTH-1:0] ddr_awid;
wire [DDR_ADDR_WIDTH-1:0] ddr_awaddr;
wire [7:0] ddr_awlen;
wire [2:0] ddr_awsize;
wire [1:0] ddr_awburst;
wire ddr_awlock;
wire [3:0] ddr_awcache;
wire [2:0] ddr_awprot;
wire ddr_awvalid;
wire ddr_awready;
wire [DDR_DATA_WIDTH-1:0] ddr_wdata;
wire [DDR_DATA_WIDTH/8-1:0] ddr_wstrb;
wire ddr_wlast;
wire ddr_wvalid;
wire ddr_wready;
wire [DDR_ID_WIDTH-1:0] ddr_bid;
wire [1:0] ddr_bresp;
wire ddr_bvalid;
wire ddr_bready;
wire [DDR_ID_WIDTH-1:0] ddr_arid;
wire [DDR_ADDR_WIDTH-1:0] ddr_araddr;
wire [7:0] ddr_arlen;
wire [2:0] ddr_arsize;
wire [1:0] ddr_arburst;
wire ddr_arlock;
wire [3:0] ddr_arcache;
wire [2:0] ddr_arprot;
wire ddr_arvalid;
wire ddr_arready;
wire [DDR_ID_WIDTH-1:0] ddr_rid;
wire [DDR_DATA_WIDTH-1:0] ddr_rdata;
wire [1:0] ddr_rresp;
wire ddr_rlast;
wire ddr_rvalid;
wire ddr_rready;

/*
 * The DMA master's handshakes as card_core sees them: all of them on the card's own path, none
 * on the reference path (where the SmartConnect model takes the traffic).
 */
localparam CORE_MM = PATH == 0;
wire core_awvalid = CORE_MM && s_axi_awvalid;
wire core_wvalid = CORE_MM && s_axi_wvalid;
wire core_bready = CORE_MM && s_axi_bready;
wire core_arvalid = CORE_MM && s_axi_arvalid;
wire core_rready = CORE_MM && s_axi_rready;
wire core_awready, core_wready, core_bvalid, core_arready, core_rvalid, core_rlast;
wire [AXI_ID_WIDTH-1:0] core_bid, core_rid;
wire [1:0] core_bresp, core_rresp;
wire [AXI_DATA_WIDTH-1:0] core_rdata;

/*
 * card_core's DDR master: the DDR3 model's port on the card's own path
 */
wire [DDR_ID_WIDTH-1:0] core_ddr_awid;
wire [DDR_ADDR_WIDTH-1:0] core_ddr_awaddr;
wire [7:0] core_ddr_awlen;
wire [2:0] core_ddr_awsize;
wire [1:0] core_ddr_awburst;
wire core_ddr_awlock;
wire [3:0] core_ddr_awcache;
wire [2:0] core_ddr_awprot;
wire core_ddr_awvalid;
wire [DDR_DATA_WIDTH-1:0] core_ddr_wdata;
wire [DDR_DATA_WIDTH/8-1:0] core_ddr_wstrb;
wire core_ddr_wlast;
wire core_ddr_wvalid;
wire core_ddr_bready;
wire [DDR_ID_WIDTH-1:0] core_ddr_arid;
wire [DDR_ADDR_WIDTH-1:0] core_ddr_araddr;
wire [7:0] core_ddr_arlen;
wire [2:0] core_ddr_arsize;
wire [1:0] core_ddr_arburst;
wire core_ddr_arlock;
wire [3:0] core_ddr_arcache;
wire [2:0] core_ddr_arprot;
wire core_ddr_arvalid;
wire core_ddr_rready;
wire core_ddr_awready, core_ddr_wready, core_ddr_bvalid, core_ddr_arready, core_ddr_rvalid;
wire core_ddr_rlast;
wire [DDR_ID_WIDTH-1:0] core_ddr_bid, core_ddr_rid;
wire [1:0] core_ddr_bresp, core_ddr_rresp;
wire [DDR_DATA_WIDTH-1:0] core_ddr_rdata;

card_core #(
    .VARIANT(VARIANT),
    .AXIL_ADDR_WIDTH(AXIL_ADDR_WIDTH),
    .AXI_DATA_WIDTH(AXI_DATA_WIDTH),
    .AXI_ADDR_WIDTH(AXI_ADDR_WIDTH),
    .AXI_ID_WIDTH(AXI_ID_WIDTH),
    .AXIS_DATA_WIDTH(AXIS_DATA_WIDTH),
    .DDR_DATA_WIDTH(DDR_DATA_WIDTH),
    .DDR_ADDR_WIDTH(DDR_ADDR_WIDTH),
    .DDR_ID_WIDTH(DDR_ID_WIDTH),
    .FAULT_RD_DROP_BEAT(FAULT_RD_DROP_BEAT),
    .FAULT_SEQ_REPEAT(FAULT_SEQ_REPEAT)
)
card_core_inst (
    .axi_aclk(axi_aclk),
    .axi_aresetn(axi_aresetn),
    .s_axi_awid(s_axi_awid),
    .s_axi_awaddr(s_axi_awaddr),
    .s_axi_awlen(s_axi_awlen),
    .s_axi_awsize(s_axi_awsize),
    .s_axi_awburst(s_axi_awburst),
    .s_axi_awlock(s_axi_awlock),
    .s_axi_awcache(s_axi_awcache),
    .s_axi_awprot(s_axi_awprot),
    .s_axi_awvalid(core_awvalid),
    .s_axi_awready(core_awready),
    .s_axi_wdata(s_axi_wdata),
    .s_axi_wstrb(s_axi_wstrb),
    .s_axi_wlast(s_axi_wlast),
    .s_axi_wvalid(core_wvalid),
    .s_axi_wready(core_wready),
    .s_axi_bid(core_bid),
    .s_axi_bresp(core_bresp),
    .s_axi_bvalid(core_bvalid),
    .s_axi_bready(core_bready),
    .s_axi_arid(s_axi_arid),
    .s_axi_araddr(s_axi_araddr),
    .s_axi_arlen(s_axi_arlen),
    .s_axi_arsize(s_axi_arsize),
    .s_axi_arburst(s_axi_arburst),
    .s_axi_arlock(s_axi_arlock),
    .s_axi_arcache(s_axi_arcache),
    .s_axi_arprot(s_axi_arprot),
    .s_axi_arvalid(core_arvalid),
    .s_axi_arready(core_arready),
    .s_axi_rid(core_rid),
    .s_axi_rdata(core_rdata),
    .s_axi_rresp(core_rresp),
    .s_axi_rlast(core_rlast),
    .s_axi_rvalid(core_rvalid),
    .s_axi_rready(core_rready),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .s_axis_h2c0_tdata(s_axis_h2c0_tdata),
    .s_axis_h2c0_tkeep(s_axis_h2c0_tkeep),
    .s_axis_h2c0_tlast(s_axis_h2c0_tlast),
    .s_axis_h2c0_tvalid(s_axis_h2c0_tvalid),
    .s_axis_h2c0_tready(s_axis_h2c0_tready),
    .m_axis_c2h0_tdata(m_axis_c2h0_tdata),
    .m_axis_c2h0_tkeep(m_axis_c2h0_tkeep),
    .m_axis_c2h0_tlast(m_axis_c2h0_tlast),
    .m_axis_c2h0_tvalid(m_axis_c2h0_tvalid),
    .m_axis_c2h0_tready(m_axis_c2h0_tready),
    .m_axis_c2h1_tdata(m_axis_c2h1_tdata),
    .m_axis_c2h1_tkeep(m_axis_c2h1_tkeep),
    .m_axis_c2h1_tlast(m_axis_c2h1_tlast),
    .m_axis_c2h1_tvalid(m_axis_c2h1_tvalid),
    .m_axis_c2h1_tready(m_axis_c2h1_tready),
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack),
    .ddr_clk(ddr_clk),
    .ddr_rst(ddr_rst),
    .m_axi_ddr_awid(core_ddr_awid),
    .m_axi_ddr_awaddr(core_ddr_awaddr),
    .m_axi_ddr_awlen(core_ddr_awlen),
    .m_axi_ddr_awsize(core_ddr_awsize),
    .m_axi_ddr_awburst(core_ddr_awburst),
    .m_axi_ddr_awlock(core_ddr_awlock),
    .m_axi_ddr_awcache(core_ddr_awcache),
    .m_axi_ddr_awprot(core_ddr_awprot),
    .m_axi_ddr_awvalid(core_ddr_awvalid),
    .m_axi_ddr_awready(core_ddr_awready),
    .m_axi_ddr_wdata(core_ddr_wdata),
    .m_axi_ddr_wstrb(core_ddr_wstrb),
    .m_axi_ddr_wlast(core_ddr_wlast),
    .m_axi_ddr_wvalid(core_ddr_wvalid),
    .m_axi_ddr_wready(core_ddr_wready),
    .m_axi_ddr_bid(core_ddr_bid),
    .m_axi_ddr_bresp(core_ddr_bresp),
    .m_axi_ddr_bvalid(core_ddr_bvalid),
    .m_axi_ddr_bready(core_ddr_bready),
    .m_axi_ddr_arid(core_ddr_arid),
    .m_axi_ddr_araddr(core_ddr_araddr),
    .m_axi_ddr_arlen(core_ddr_arlen),
    .m_axi_ddr_arsize(core_ddr_arsize),
    .m_axi_ddr_arburst(core_ddr_arburst),
    .m_axi_ddr_arlock(core_ddr_arlock),
    .m_axi_ddr_arcache(core_ddr_arcache),
    .m_axi_ddr_arprot(core_ddr_arprot),
    .m_axi_ddr_arvalid(core_ddr_arvalid),
    .m_axi_ddr_arready(core_ddr_arready),
    .m_axi_ddr_rid(core_ddr_rid),
    .m_axi_ddr_rdata(core_ddr_rdata),
    .m_axi_ddr_rresp(core_ddr_rresp),
    .m_axi_ddr_rlast(core_ddr_rlast),
    .m_axi_ddr_rvalid(core_ddr_rvalid),
    .m_axi_ddr_rready(core_ddr_rready),
    .fault_rd_drop_beat_en(sim_fault_rd_drop_beat),
    .fault_seq_repeat_en(sim_fault_seq_repeat)
);

/*
 * The path to the DDR3 model
 */
generate
    if (PATH == 0) begin : card_path_g
        assign s_axi_awready = core_awready;
        assign s_axi_wready = core_wready;
        assign s_axi_bid = core_bid;
        assign s_axi_bresp = core_bresp;
        assign s_axi_bvalid = core_bvalid;
        assign s_axi_arready = core_arready;
        assign s_axi_rid = core_rid;
        assign s_axi_rdata = core_rdata;
        assign s_axi_rresp = core_rresp;
        assign s_axi_rlast = core_rlast;
        assign s_axi_rvalid = core_rvalid;
        assign ddr_awid = core_ddr_awid;
        assign ddr_awaddr = core_ddr_awaddr;
        assign ddr_awlen = core_ddr_awlen;
        assign ddr_awsize = core_ddr_awsize;
        assign ddr_awburst = core_ddr_awburst;
        assign ddr_awlock = core_ddr_awlock;
        assign ddr_awcache = core_ddr_awcache;
        assign ddr_awprot = core_ddr_awprot;
        assign ddr_awvalid = core_ddr_awvalid;
        assign ddr_wdata = core_ddr_wdata;
        assign ddr_wstrb = core_ddr_wstrb;
        assign ddr_wlast = core_ddr_wlast;
        assign ddr_wvalid = core_ddr_wvalid;
        assign ddr_bready = core_ddr_bready;
        assign ddr_arid = core_ddr_arid;
        assign ddr_araddr = core_ddr_araddr;
        assign ddr_arlen = core_ddr_arlen;
        assign ddr_arsize = core_ddr_arsize;
        assign ddr_arburst = core_ddr_arburst;
        assign ddr_arlock = core_ddr_arlock;
        assign ddr_arcache = core_ddr_arcache;
        assign ddr_arprot = core_ddr_arprot;
        assign ddr_arvalid = core_ddr_arvalid;
        assign ddr_rready = core_ddr_rready;
        assign core_ddr_awready = ddr_awready;
        assign core_ddr_wready = ddr_wready;
        assign core_ddr_bid = ddr_bid;
        assign core_ddr_bresp = ddr_bresp;
        assign core_ddr_bvalid = ddr_bvalid;
        assign core_ddr_arready = ddr_arready;
        assign core_ddr_rid = ddr_rid;
        assign core_ddr_rdata = ddr_rdata;
        assign core_ddr_rresp = ddr_rresp;
        assign core_ddr_rlast = ddr_rlast;
        assign core_ddr_rvalid = ddr_rvalid;
    end else begin : core_idle_g
        // card_core's own slave sees no handshake; its outputs are unused.
        wire unused_core = &{1'b0, core_awready, core_wready, core_bid, core_bresp, core_bvalid,
            core_arready, core_rid, core_rdata, core_rresp, core_rlast, core_rvalid,
            core_ddr_awid, core_ddr_awaddr, core_ddr_awlen, core_ddr_awsize, core_ddr_awburst,
            core_ddr_awlock, core_ddr_awcache, core_ddr_awprot, core_ddr_awvalid, core_ddr_wdata,
            core_ddr_wstrb, core_ddr_wlast, core_ddr_wvalid, core_ddr_bready, core_ddr_arid,
            core_ddr_araddr, core_ddr_arlen, core_ddr_arsize, core_ddr_arburst, core_ddr_arlock,
            core_ddr_arcache, core_ddr_arprot, core_ddr_arvalid, core_ddr_rready, 1'b0};
        // card_core's DDR master (the capture writer) never gets a ready or a response here.
        assign core_ddr_awready = 1'b0;
        assign core_ddr_wready = 1'b0;
        assign core_ddr_bid = {DDR_ID_WIDTH{1'b0}};
        assign core_ddr_bresp = 2'b00;
        assign core_ddr_bvalid = 1'b0;
        assign core_ddr_arready = 1'b0;
        assign core_ddr_rid = {DDR_ID_WIDTH{1'b0}};
        assign core_ddr_rdata = {DDR_DATA_WIDTH{1'b0}};
        assign core_ddr_rresp = 2'b00;
        assign core_ddr_rlast = 1'b0;
        assign core_ddr_rvalid = 1'b0;

    end
endgenerate

/*
 * The reference path's SmartConnect model, or the tap, or neither
 */
generate
    if (PATH == 1) begin : reference_path_g
        axi_smartconnect_model #(
            .S_DATA_WIDTH(AXI_DATA_WIDTH),
            .S_ADDR_WIDTH(AXI_ADDR_WIDTH),
            .S_ID_WIDTH(AXI_ID_WIDTH),
            .M_DATA_WIDTH(DDR_DATA_WIDTH),
            .M_ADDR_WIDTH(DDR_ADDR_WIDTH),
            .M_ID_WIDTH(DDR_ID_WIDTH)
        )
        smartconnect_inst (
            .s_clk(axi_aclk),
            .s_rst(!axi_aresetn),
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
            .m_clk(ddr_clk),
            .m_rst(ddr_rst),
            .m_axi_awid(ddr_awid),
            .m_axi_awaddr(ddr_awaddr),
            .m_axi_awlen(ddr_awlen),
            .m_axi_awsize(ddr_awsize),
            .m_axi_awburst(ddr_awburst),
            .m_axi_awlock(ddr_awlock),
            .m_axi_awcache(ddr_awcache),
            .m_axi_awprot(ddr_awprot),
            .m_axi_awvalid(ddr_awvalid),
            .m_axi_awready(ddr_awready),
            .m_axi_wdata(ddr_wdata),
            .m_axi_wstrb(ddr_wstrb),
            .m_axi_wlast(ddr_wlast),
            .m_axi_wvalid(ddr_wvalid),
            .m_axi_wready(ddr_wready),
            .m_axi_bid(ddr_bid),
            .m_axi_bresp(ddr_bresp),
            .m_axi_bvalid(ddr_bvalid),
            .m_axi_bready(ddr_bready),
            .m_axi_arid(ddr_arid),
            .m_axi_araddr(ddr_araddr),
            .m_axi_arlen(ddr_arlen),
            .m_axi_arsize(ddr_arsize),
            .m_axi_arburst(ddr_arburst),
            .m_axi_arlock(ddr_arlock),
            .m_axi_arcache(ddr_arcache),
            .m_axi_arprot(ddr_arprot),
            .m_axi_arvalid(ddr_arvalid),
            .m_axi_arready(ddr_arready),
            .m_axi_rid(ddr_rid),
            .m_axi_rdata(ddr_rdata),
            .m_axi_rresp(ddr_rresp),
            .m_axi_rlast(ddr_rlast),
            .m_axi_rvalid(ddr_rvalid),
            .m_axi_rready(ddr_rready)
        );
    end else if (PATH == 2) begin : tap_path_g
        // Nothing drives the DDR3 model's port on the tap, and nothing reads its answers.
        wire unused_ddr_answers = &{1'b0, ddr_awready, ddr_wready, ddr_bid, ddr_bresp, ddr_bvalid,
            ddr_arready, ddr_rid, ddr_rdata, ddr_rresp, ddr_rlast, ddr_rvalid, 1'b0};
        assign ddr_awid = {DDR_ID_WIDTH{1'b0}};
        assign ddr_awaddr = {DDR_ADDR_WIDTH{1'b0}};
        assign ddr_awlen = 8'd0;
        assign ddr_awsize = 3'd0;
        assign ddr_awburst = 2'd0;
        assign ddr_awlock = 1'b0;
        assign ddr_awcache = 4'd0;
        assign ddr_awprot = 3'd0;
        assign ddr_awvalid = 1'b0;
        assign ddr_wdata = {DDR_DATA_WIDTH{1'b0}};
        assign ddr_wstrb = {DDR_DATA_WIDTH/8{1'b0}};
        assign ddr_wlast = 1'b0;
        assign ddr_wvalid = 1'b0;
        assign ddr_bready = 1'b0;
        assign ddr_arid = {DDR_ID_WIDTH{1'b0}};
        assign ddr_araddr = {DDR_ADDR_WIDTH{1'b0}};
        assign ddr_arlen = 8'd0;
        assign ddr_arsize = 3'd0;
        assign ddr_arburst = 2'd0;
        assign ddr_arlock = 1'b0;
        assign ddr_arcache = 4'd0;
        assign ddr_arprot = 3'd0;
        assign ddr_arvalid = 1'b0;
        assign ddr_rready = 1'b0;
    end
endgenerate

generate
    if (PATH == 2) begin : tap_g
        // The DMA master's port straight out of the top; the slave model answers it.
        assign m_axi_tap_awid = s_axi_awid;
        assign m_axi_tap_awaddr = s_axi_awaddr;
        assign m_axi_tap_awlen = s_axi_awlen;
        assign m_axi_tap_awsize = s_axi_awsize;
        assign m_axi_tap_awburst = s_axi_awburst;
        assign m_axi_tap_awlock = s_axi_awlock;
        assign m_axi_tap_awcache = s_axi_awcache;
        assign m_axi_tap_awprot = s_axi_awprot;
        assign m_axi_tap_awvalid = s_axi_awvalid;
        assign m_axi_tap_wdata = s_axi_wdata;
        assign m_axi_tap_wstrb = s_axi_wstrb;
        assign m_axi_tap_wlast = s_axi_wlast;
        assign m_axi_tap_wvalid = s_axi_wvalid;
        assign m_axi_tap_bready = s_axi_bready;
        assign m_axi_tap_arid = s_axi_arid;
        assign m_axi_tap_araddr = s_axi_araddr;
        assign m_axi_tap_arlen = s_axi_arlen;
        assign m_axi_tap_arsize = s_axi_arsize;
        assign m_axi_tap_arburst = s_axi_arburst;
        assign m_axi_tap_arlock = s_axi_arlock;
        assign m_axi_tap_arcache = s_axi_arcache;
        assign m_axi_tap_arprot = s_axi_arprot;
        assign m_axi_tap_arvalid = s_axi_arvalid;
        assign m_axi_tap_rready = s_axi_rready;
        assign s_axi_awready = m_axi_tap_awready;
        assign s_axi_wready = m_axi_tap_wready;
        assign s_axi_bid = m_axi_tap_bid;
        assign s_axi_bresp = m_axi_tap_bresp;
        assign s_axi_bvalid = m_axi_tap_bvalid;
        assign s_axi_arready = m_axi_tap_arready;
        assign s_axi_rid = m_axi_tap_rid;
        assign s_axi_rdata = m_axi_tap_rdata;
        assign s_axi_rresp = m_axi_tap_rresp;
        assign s_axi_rlast = m_axi_tap_rlast;
        assign s_axi_rvalid = m_axi_tap_rvalid;
    end else begin : no_tap_g
        // No tap on this path: its outputs are quiet and its inputs unused.
        assign m_axi_tap_awid = {(AXI_ID_WIDTH-1+1){1'b0}};
        assign m_axi_tap_awaddr = {(AXI_ADDR_WIDTH-1+1){1'b0}};
        assign m_axi_tap_awlen = 8'd0;
        assign m_axi_tap_awsize = 3'd0;
        assign m_axi_tap_awburst = 2'd0;
        assign m_axi_tap_awlock = 1'b0;
        assign m_axi_tap_awcache = 4'd0;
        assign m_axi_tap_awprot = 3'd0;
        assign m_axi_tap_awvalid = 1'b0;
        assign m_axi_tap_wdata = {(AXI_DATA_WIDTH-1+1){1'b0}};
        assign m_axi_tap_wstrb = {(AXI_DATA_WIDTH/8-1+1){1'b0}};
        assign m_axi_tap_wlast = 1'b0;
        assign m_axi_tap_wvalid = 1'b0;
        assign m_axi_tap_bready = 1'b0;
        assign m_axi_tap_arid = {(AXI_ID_WIDTH-1+1){1'b0}};
        assign m_axi_tap_araddr = {(AXI_ADDR_WIDTH-1+1){1'b0}};
        assign m_axi_tap_arlen = 8'd0;
        assign m_axi_tap_arsize = 3'd0;
        assign m_axi_tap_arburst = 2'd0;
        assign m_axi_tap_arlock = 1'b0;
        assign m_axi_tap_arcache = 4'd0;
        assign m_axi_tap_arprot = 3'd0;
        assign m_axi_tap_arvalid = 1'b0;
        assign m_axi_tap_rready = 1'b0;
        wire unused_tap = &{1'b0, m_axi_tap_awready, m_axi_tap_wready, m_axi_tap_bid, m_axi_tap_bresp, m_axi_tap_bvalid, m_axi_tap_arready, m_axi_tap_rid, m_axi_tap_rdata, m_axi_tap_rresp, m_axi_tap_rlast, m_axi_tap_rvalid, 1'b0};
    end
endgenerate

generate
    if (VARIANT % 2 == 1) begin : ddr_g
    ddr3_model #(
        .DATA_WIDTH(DDR_DATA_WIDTH),
        .ADDR_WIDTH(DDR_ADDR_WIDTH),
        .ID_WIDTH(DDR_ID_WIDTH)
    )
    ddr3_model_inst (
        .clk(ddr_clk),
        .rst(ddr_rst),
        .arb_algorithm(ddr_arb_algorithm),
        .s_axi_awid(ddr_awid),
        .s_axi_awaddr(ddr_awaddr),
        .s_axi_awlen(ddr_awlen),
        .s_axi_awsize(ddr_awsize),
        .s_axi_awburst(ddr_awburst),
        .s_axi_awlock(ddr_awlock),
        .s_axi_awcache(ddr_awcache),
        .s_axi_awprot(ddr_awprot),
        .s_axi_awqos(ddr_awqos),
        .s_axi_awvalid(ddr_awvalid),
        .s_axi_awready(ddr_awready),
        .s_axi_wdata(ddr_wdata),
        .s_axi_wstrb(ddr_wstrb),
        .s_axi_wlast(ddr_wlast),
        .s_axi_wvalid(ddr_wvalid),
        .s_axi_wready(ddr_wready),
        .s_axi_bid(ddr_bid),
        .s_axi_bresp(ddr_bresp),
        .s_axi_bvalid(ddr_bvalid),
        .s_axi_bready(ddr_bready),
        .s_axi_arid(ddr_arid),
        .s_axi_araddr(ddr_araddr),
        .s_axi_arlen(ddr_arlen),
        .s_axi_arsize(ddr_arsize),
        .s_axi_arburst(ddr_arburst),
        .s_axi_arlock(ddr_arlock),
        .s_axi_arcache(ddr_arcache),
        .s_axi_arprot(ddr_arprot),
        .s_axi_arqos(ddr_arqos),
        .s_axi_arvalid(ddr_arvalid),
        .s_axi_arready(ddr_arready),
        .s_axi_rid(ddr_rid),
        .s_axi_rdata(ddr_rdata),
        .s_axi_rresp(ddr_rresp),
        .s_axi_rlast(ddr_rlast),
        .s_axi_rvalid(ddr_rvalid),
        .s_axi_rready(ddr_rready)
    );
    end else begin : no_ddr_g
        // No DDR path in the stream variant: card_core never drives its DDR port.
        assign ddr_awready = 1'b0;
        assign ddr_wready = 1'b0;
        assign ddr_bid = {DDR_ID_WIDTH{1'b0}};
        assign ddr_bresp = 2'b00;
        assign ddr_bvalid = 1'b0;
        assign ddr_arready = 1'b0;
        assign ddr_rid = {DDR_ID_WIDTH{1'b0}};
        assign ddr_rdata = {DDR_DATA_WIDTH{1'b0}};
        assign ddr_rresp = 2'b00;
        assign ddr_rlast = 1'b0;
        assign ddr_rvalid = 1'b0;
        wire unused_ddr = &{1'b0, ddr_awid, ddr_awaddr, ddr_awlen, ddr_awsize, ddr_awburst,
            ddr_awlock, ddr_awcache, ddr_awprot, ddr_awvalid, ddr_wdata, ddr_wstrb, ddr_wlast,
            ddr_wvalid, ddr_bready, ddr_arid, ddr_araddr, ddr_arlen, ddr_arsize, ddr_arburst,
            ddr_arlock, ddr_arcache, ddr_arprot, ddr_arvalid, ddr_rready, ddr_arb_algorithm,
            ddr_awqos, ddr_arqos, 1'b0};
    end
endgenerate

endmodule

`resetall
