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
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module sim_top #
(
    // card_core's VARIANT: 1 mm, 2 stream, 3 combined (simulation only)
    parameter VARIANT = 3,
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
    // Deliberate faults for the host suite's broken-card tests (card_core's FAULT_*); 0 is
    // the card as built
    parameter FAULT_RD_DROP_BEAT = 0,
    // Every N-th frame of a source repeats the previous sequence number; 0: never
    parameter FAULT_SEQ_REPEAT = 0
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
     * User interrupt (XDMA handshake: the request is held until acknowledged)
     */
    output wire                          usr_irq_req,
    input  wire                          usr_irq_ack,

    /*
     * DDR controller user clock and its synchronous reset (active high)
     */
    input  wire                          ddr_clk,
    input  wire                          ddr_rst
);

// check configuration
initial begin
    if (VARIANT < 1 || VARIANT > 3) begin
        $error("Error: VARIANT must be 1 (mm), 2 (stream) or 3 (combined) (instance %m)");
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
    .m_axi_ddr_awid(ddr_awid),
    .m_axi_ddr_awaddr(ddr_awaddr),
    .m_axi_ddr_awlen(ddr_awlen),
    .m_axi_ddr_awsize(ddr_awsize),
    .m_axi_ddr_awburst(ddr_awburst),
    .m_axi_ddr_awlock(ddr_awlock),
    .m_axi_ddr_awcache(ddr_awcache),
    .m_axi_ddr_awprot(ddr_awprot),
    .m_axi_ddr_awvalid(ddr_awvalid),
    .m_axi_ddr_awready(ddr_awready),
    .m_axi_ddr_wdata(ddr_wdata),
    .m_axi_ddr_wstrb(ddr_wstrb),
    .m_axi_ddr_wlast(ddr_wlast),
    .m_axi_ddr_wvalid(ddr_wvalid),
    .m_axi_ddr_wready(ddr_wready),
    .m_axi_ddr_bid(ddr_bid),
    .m_axi_ddr_bresp(ddr_bresp),
    .m_axi_ddr_bvalid(ddr_bvalid),
    .m_axi_ddr_bready(ddr_bready),
    .m_axi_ddr_arid(ddr_arid),
    .m_axi_ddr_araddr(ddr_araddr),
    .m_axi_ddr_arlen(ddr_arlen),
    .m_axi_ddr_arsize(ddr_arsize),
    .m_axi_ddr_arburst(ddr_arburst),
    .m_axi_ddr_arlock(ddr_arlock),
    .m_axi_ddr_arcache(ddr_arcache),
    .m_axi_ddr_arprot(ddr_arprot),
    .m_axi_ddr_arvalid(ddr_arvalid),
    .m_axi_ddr_arready(ddr_arready),
    .m_axi_ddr_rid(ddr_rid),
    .m_axi_ddr_rdata(ddr_rdata),
    .m_axi_ddr_rresp(ddr_rresp),
    .m_axi_ddr_rlast(ddr_rlast),
    .m_axi_ddr_rvalid(ddr_rvalid),
    .m_axi_ddr_rready(ddr_rready)
);

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
        .s_axi_awid(ddr_awid),
        .s_axi_awaddr(ddr_awaddr),
        .s_axi_awlen(ddr_awlen),
        .s_axi_awsize(ddr_awsize),
        .s_axi_awburst(ddr_awburst),
        .s_axi_awlock(ddr_awlock),
        .s_axi_awcache(ddr_awcache),
        .s_axi_awprot(ddr_awprot),
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
            ddr_arlock, ddr_arcache, ddr_arprot, ddr_arvalid, ddr_rready, 1'b0};
    end
endgenerate

endmodule

`resetall
