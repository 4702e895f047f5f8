/*
 * Proof wrapper of card_core, the card's top, in either build (VARIANT: memory-mapped or
 * stream), at narrow widths where it allows them (the DDR port 256 bits, short DDR addresses,
 * one ID bit), both clocks one clock. Its blocks are proven on their own; this bound checks
 * that the top's wiring keeps every bus's rules together: the user BAR (AXI4-Lite), the DMA
 * engine's AXI4 master and the H2C stream are checked as slaves, the DDR port and both C2H
 * streams as masters (a build's other ports are tied idle, which their checks see), with every
 * other input free (the interrupt acknowledge, the DDR controller's answers within the rules,
 * the fault enables). A bound of a few bursts' length only: the top holds the frame sources,
 * the checker, the capture writer, the register file and the memory path at once.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_card_core #
(
    // The card's build: 1 memory-mapped, 2 stream (3, both, exists in simulation only)
    parameter VARIANT = 1,
    // Width of the user BAR byte address in bits: the register window only
    parameter AXIL_ADDR_WIDTH = 12,
    // Width of the DMA address in bits (the capture writer's 31-bit ring pointers need 31)
    parameter AXI_ADDR_WIDTH = 32,
    // Width of the DMA ID in bits
    parameter AXI_ID_WIDTH = 1,
    // Width of the DDR data bus in bits: two DMA beats a DDR beat
    parameter DDR_DATA_WIDTH = 256,
    // Width of the DDR address in bits (the least the property modules take)
    parameter DDR_ADDR_WIDTH = 12,
    // Width of the DMA and stream data in bits (the card's only width)
    parameter AXI_DATA_WIDTH = 128,
    parameter AXIS_DATA_WIDTH = 128,
    // Width of the DDR ID in bits
    parameter DDR_ID_WIDTH = AXI_ID_WIDTH + 1
)
(
    input  wire                               axi_aclk,
    input  wire                               axi_aresetn,
    input  wire [AXI_ID_WIDTH-1:0]            s_axi_awid,
    input  wire [AXI_ADDR_WIDTH-1:0]          s_axi_awaddr,
    input  wire [7:0]                         s_axi_awlen,
    input  wire [2:0]                         s_axi_awsize,
    input  wire [1:0]                         s_axi_awburst,
    input  wire                               s_axi_awlock,
    input  wire [3:0]                         s_axi_awcache,
    input  wire [2:0]                         s_axi_awprot,
    input  wire                               s_axi_awvalid,
    input  wire [AXI_DATA_WIDTH-1:0]          s_axi_wdata,
    input  wire [AXI_DATA_WIDTH/8-1:0]        s_axi_wstrb,
    input  wire                               s_axi_wlast,
    input  wire                               s_axi_wvalid,
    input  wire                               s_axi_bready,
    input  wire [AXI_ID_WIDTH-1:0]            s_axi_arid,
    input  wire [AXI_ADDR_WIDTH-1:0]          s_axi_araddr,
    input  wire [7:0]                         s_axi_arlen,
    input  wire [2:0]                         s_axi_arsize,
    input  wire [1:0]                         s_axi_arburst,
    input  wire                               s_axi_arlock,
    input  wire [3:0]                         s_axi_arcache,
    input  wire [2:0]                         s_axi_arprot,
    input  wire                               s_axi_arvalid,
    input  wire                               s_axi_rready,
    input  wire [AXIL_ADDR_WIDTH-1:0]         s_axil_awaddr,
    input  wire [2:0]                         s_axil_awprot,
    input  wire                               s_axil_awvalid,
    input  wire [31:0]                        s_axil_wdata,
    input  wire [3:0]                         s_axil_wstrb,
    input  wire                               s_axil_wvalid,
    input  wire                               s_axil_bready,
    input  wire [AXIL_ADDR_WIDTH-1:0]         s_axil_araddr,
    input  wire [2:0]                         s_axil_arprot,
    input  wire                               s_axil_arvalid,
    input  wire                               s_axil_rready,
    input  wire [AXIS_DATA_WIDTH-1:0]         s_axis_h2c0_tdata,
    input  wire [AXIS_DATA_WIDTH/8-1:0]       s_axis_h2c0_tkeep,
    input  wire                               s_axis_h2c0_tlast,
    input  wire                               s_axis_h2c0_tvalid,
    input  wire                               m_axis_c2h0_tready,
    input  wire                               m_axis_c2h1_tready,
    input  wire                               usr_irq_ack,
    input  wire                               m_axi_ddr_awready,
    input  wire                               m_axi_ddr_wready,
    input  wire [DDR_ID_WIDTH-1:0]            m_axi_ddr_bid,
    input  wire [1:0]                         m_axi_ddr_bresp,
    input  wire                               m_axi_ddr_bvalid,
    input  wire                               m_axi_ddr_arready,
    input  wire [DDR_ID_WIDTH-1:0]            m_axi_ddr_rid,
    input  wire [DDR_DATA_WIDTH-1:0]          m_axi_ddr_rdata,
    input  wire [1:0]                         m_axi_ddr_rresp,
    input  wire                               m_axi_ddr_rlast,
    input  wire                               m_axi_ddr_rvalid,
    input  wire                               fault_rd_drop_beat_en,
    input  wire                               fault_seq_repeat_en
);

`ifdef FORMAL

    wire                               s_axi_awready;
    wire                               s_axi_wready;
    wire [AXI_ID_WIDTH-1:0]            s_axi_bid;
    wire [1:0]                         s_axi_bresp;
    wire                               s_axi_bvalid;
    wire                               s_axi_arready;
    wire [AXI_ID_WIDTH-1:0]            s_axi_rid;
    wire [AXI_DATA_WIDTH-1:0]          s_axi_rdata;
    wire [1:0]                         s_axi_rresp;
    wire                               s_axi_rlast;
    wire                               s_axi_rvalid;
    wire                               s_axil_awready;
    wire                               s_axil_wready;
    wire [1:0]                         s_axil_bresp;
    wire                               s_axil_bvalid;
    wire                               s_axil_arready;
    wire [31:0]                        s_axil_rdata;
    wire [1:0]                         s_axil_rresp;
    wire                               s_axil_rvalid;
    wire                               s_axis_h2c0_tready;
    wire [AXIS_DATA_WIDTH-1:0]         m_axis_c2h0_tdata;
    wire [AXIS_DATA_WIDTH/8-1:0]       m_axis_c2h0_tkeep;
    wire                               m_axis_c2h0_tlast;
    wire                               m_axis_c2h0_tvalid;
    wire [AXIS_DATA_WIDTH-1:0]         m_axis_c2h1_tdata;
    wire [AXIS_DATA_WIDTH/8-1:0]       m_axis_c2h1_tkeep;
    wire                               m_axis_c2h1_tlast;
    wire                               m_axis_c2h1_tvalid;
    wire                               usr_irq_req;
    wire [DDR_ID_WIDTH-1:0]            m_axi_ddr_awid;
    wire [DDR_ADDR_WIDTH-1:0]          m_axi_ddr_awaddr;
    wire [7:0]                         m_axi_ddr_awlen;
    wire [2:0]                         m_axi_ddr_awsize;
    wire [1:0]                         m_axi_ddr_awburst;
    wire                               m_axi_ddr_awlock;
    wire [3:0]                         m_axi_ddr_awcache;
    wire [2:0]                         m_axi_ddr_awprot;
    wire                               m_axi_ddr_awvalid;
    wire [DDR_DATA_WIDTH-1:0]          m_axi_ddr_wdata;
    wire [DDR_DATA_WIDTH/8-1:0]        m_axi_ddr_wstrb;
    wire                               m_axi_ddr_wlast;
    wire                               m_axi_ddr_wvalid;
    wire                               m_axi_ddr_bready;
    wire [DDR_ID_WIDTH-1:0]            m_axi_ddr_arid;
    wire [DDR_ADDR_WIDTH-1:0]          m_axi_ddr_araddr;
    wire [7:0]                         m_axi_ddr_arlen;
    wire [2:0]                         m_axi_ddr_arsize;
    wire [1:0]                         m_axi_ddr_arburst;
    wire                               m_axi_ddr_arlock;
    wire [3:0]                         m_axi_ddr_arcache;
    wire [2:0]                         m_axi_ddr_arprot;
    wire                               m_axi_ddr_arvalid;
    wire                               m_axi_ddr_rready;

    card_core #(
        .VARIANT(VARIANT),
        .AXIL_ADDR_WIDTH(AXIL_ADDR_WIDTH),
        .AXI_DATA_WIDTH(AXI_DATA_WIDTH),
        .AXI_ADDR_WIDTH(AXI_ADDR_WIDTH),
        .AXI_ID_WIDTH(AXI_ID_WIDTH),
        .AXIS_DATA_WIDTH(AXIS_DATA_WIDTH),
        .DDR_DATA_WIDTH(DDR_DATA_WIDTH),
        .DDR_ADDR_WIDTH(DDR_ADDR_WIDTH),
        .DDR_ID_WIDTH(DDR_ID_WIDTH)
    ) dut (
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
        .ddr_clk(axi_aclk),
        .ddr_rst(!axi_aresetn),
        .m_axi_ddr_awid(m_axi_ddr_awid),
        .m_axi_ddr_awaddr(m_axi_ddr_awaddr),
        .m_axi_ddr_awlen(m_axi_ddr_awlen),
        .m_axi_ddr_awsize(m_axi_ddr_awsize),
        .m_axi_ddr_awburst(m_axi_ddr_awburst),
        .m_axi_ddr_awlock(m_axi_ddr_awlock),
        .m_axi_ddr_awcache(m_axi_ddr_awcache),
        .m_axi_ddr_awprot(m_axi_ddr_awprot),
        .m_axi_ddr_awvalid(m_axi_ddr_awvalid),
        .m_axi_ddr_awready(m_axi_ddr_awready),
        .m_axi_ddr_wdata(m_axi_ddr_wdata),
        .m_axi_ddr_wstrb(m_axi_ddr_wstrb),
        .m_axi_ddr_wlast(m_axi_ddr_wlast),
        .m_axi_ddr_wvalid(m_axi_ddr_wvalid),
        .m_axi_ddr_wready(m_axi_ddr_wready),
        .m_axi_ddr_bid(m_axi_ddr_bid),
        .m_axi_ddr_bresp(m_axi_ddr_bresp),
        .m_axi_ddr_bvalid(m_axi_ddr_bvalid),
        .m_axi_ddr_bready(m_axi_ddr_bready),
        .m_axi_ddr_arid(m_axi_ddr_arid),
        .m_axi_ddr_araddr(m_axi_ddr_araddr),
        .m_axi_ddr_arlen(m_axi_ddr_arlen),
        .m_axi_ddr_arsize(m_axi_ddr_arsize),
        .m_axi_ddr_arburst(m_axi_ddr_arburst),
        .m_axi_ddr_arlock(m_axi_ddr_arlock),
        .m_axi_ddr_arcache(m_axi_ddr_arcache),
        .m_axi_ddr_arprot(m_axi_ddr_arprot),
        .m_axi_ddr_arvalid(m_axi_ddr_arvalid),
        .m_axi_ddr_arready(m_axi_ddr_arready),
        .m_axi_ddr_rid(m_axi_ddr_rid),
        .m_axi_ddr_rdata(m_axi_ddr_rdata),
        .m_axi_ddr_rresp(m_axi_ddr_rresp),
        .m_axi_ddr_rlast(m_axi_ddr_rlast),
        .m_axi_ddr_rvalid(m_axi_ddr_rvalid),
        .m_axi_ddr_rready(m_axi_ddr_rready),
        .fault_rd_drop_beat_en(fault_rd_drop_beat_en),
        .fault_seq_repeat_en(fault_seq_repeat_en)
    );

    faxil_slave #(
        .DATA_WIDTH(32),
        .ADDR_WIDTH(AXIL_ADDR_WIDTH)
    ) f_bar (
        .clk(axi_aclk),
        .rst(!axi_aresetn),
        .awaddr(s_axil_awaddr),
        .awprot(s_axil_awprot),
        .awvalid(s_axil_awvalid),
        .awready(s_axil_awready),
        .wdata(s_axil_wdata),
        .wstrb(s_axil_wstrb),
        .wvalid(s_axil_wvalid),
        .wready(s_axil_wready),
        .bresp(s_axil_bresp),
        .bvalid(s_axil_bvalid),
        .bready(s_axil_bready),
        .araddr(s_axil_araddr),
        .arprot(s_axil_arprot),
        .arvalid(s_axil_arvalid),
        .arready(s_axil_arready),
        .rdata(s_axil_rdata),
        .rresp(s_axil_rresp),
        .rvalid(s_axil_rvalid),
        .rready(s_axil_rready)
    );

    faxi_slave #(
        .DATA_WIDTH(AXI_DATA_WIDTH),
        .ADDR_WIDTH(AXI_ADDR_WIDTH),
        .ID_WIDTH(AXI_ID_WIDTH)
    ) f_dma (
        .clk(axi_aclk),
        .rst(!axi_aresetn),
        .awid(s_axi_awid),
        .awaddr(s_axi_awaddr),
        .awlen(s_axi_awlen),
        .awsize(s_axi_awsize),
        .awburst(s_axi_awburst),
        .awvalid(s_axi_awvalid),
        .awready(s_axi_awready),
        .wdata(s_axi_wdata),
        .wstrb(s_axi_wstrb),
        .wlast(s_axi_wlast),
        .wvalid(s_axi_wvalid),
        .wready(s_axi_wready),
        .bid(s_axi_bid),
        .bresp(s_axi_bresp),
        .bvalid(s_axi_bvalid),
        .bready(s_axi_bready),
        .arid(s_axi_arid),
        .araddr(s_axi_araddr),
        .arlen(s_axi_arlen),
        .arsize(s_axi_arsize),
        .arburst(s_axi_arburst),
        .arvalid(s_axi_arvalid),
        .arready(s_axi_arready),
        .rid(s_axi_rid),
        .rdata(s_axi_rdata),
        .rresp(s_axi_rresp),
        .rlast(s_axi_rlast),
        .rvalid(s_axi_rvalid),
        .rready(s_axi_rready)
    );

    faxi_master #(
        .DATA_WIDTH(DDR_DATA_WIDTH),
        .ADDR_WIDTH(DDR_ADDR_WIDTH),
        .ID_WIDTH(DDR_ID_WIDTH)
    ) f_ddr (
        .clk(axi_aclk),
        .rst(!axi_aresetn),
        .awid(m_axi_ddr_awid),
        .awaddr(m_axi_ddr_awaddr),
        .awlen(m_axi_ddr_awlen),
        .awsize(m_axi_ddr_awsize),
        .awburst(m_axi_ddr_awburst),
        .awvalid(m_axi_ddr_awvalid),
        .awready(m_axi_ddr_awready),
        .wdata(m_axi_ddr_wdata),
        .wstrb(m_axi_ddr_wstrb),
        .wlast(m_axi_ddr_wlast),
        .wvalid(m_axi_ddr_wvalid),
        .wready(m_axi_ddr_wready),
        .bid(m_axi_ddr_bid),
        .bresp(m_axi_ddr_bresp),
        .bvalid(m_axi_ddr_bvalid),
        .bready(m_axi_ddr_bready),
        .arid(m_axi_ddr_arid),
        .araddr(m_axi_ddr_araddr),
        .arlen(m_axi_ddr_arlen),
        .arsize(m_axi_ddr_arsize),
        .arburst(m_axi_ddr_arburst),
        .arvalid(m_axi_ddr_arvalid),
        .arready(m_axi_ddr_arready),
        .rid(m_axi_ddr_rid),
        .rdata(m_axi_ddr_rdata),
        .rresp(m_axi_ddr_rresp),
        .rlast(m_axi_ddr_rlast),
        .rvalid(m_axi_ddr_rvalid),
        .rready(m_axi_ddr_rready)
    );

    faxis_slave #(
        .DATA_WIDTH(AXIS_DATA_WIDTH),
        .KEEP_WIDTH(AXIS_DATA_WIDTH/8),
        .KEEP_PACKED(1)
    ) f_h2c0 (
        .clk(axi_aclk),
        .rst(!axi_aresetn),
        .tdata(s_axis_h2c0_tdata),
        .tkeep(s_axis_h2c0_tkeep),
        .tlast(s_axis_h2c0_tlast),
        .tvalid(s_axis_h2c0_tvalid),
        .tready(s_axis_h2c0_tready)
    );

    faxis_master #(
        .DATA_WIDTH(AXIS_DATA_WIDTH),
        .KEEP_WIDTH(AXIS_DATA_WIDTH/8),
        .KEEP_PACKED(1)
    ) f_c2h0 (
        .clk(axi_aclk),
        .rst(!axi_aresetn),
        .tdata(m_axis_c2h0_tdata),
        .tkeep(m_axis_c2h0_tkeep),
        .tlast(m_axis_c2h0_tlast),
        .tvalid(m_axis_c2h0_tvalid),
        .tready(m_axis_c2h0_tready)
    );

    faxis_master #(
        .DATA_WIDTH(AXIS_DATA_WIDTH),
        .KEEP_WIDTH(AXIS_DATA_WIDTH/8),
        .KEEP_PACKED(1)
    ) f_c2h1 (
        .clk(axi_aclk),
        .rst(!axi_aresetn),
        .tdata(m_axis_c2h1_tdata),
        .tkeep(m_axis_c2h1_tkeep),
        .tlast(m_axis_c2h1_tlast),
        .tvalid(m_axis_c2h1_tvalid),
        .tready(m_axis_c2h1_tready)
    );

    // What each build moves: the memory-mapped one a DMA write into the DDR, the stream one an
    // H2C beat into the card (each build ties the other's ports idle).
    localparam MM = VARIANT == 1;

    always @(posedge axi_aclk) begin
        if (axi_aresetn) begin
            cover_register_read: cover (s_axil_rvalid && s_axil_rready);
            cover_register_write: cover (s_axil_bvalid && s_axil_bready && s_axil_bresp == 2'b00);
            cover_dma_in: cover (MM ? (s_axi_wvalid && s_axi_wready && s_axi_wlast)
                : (s_axis_h2c0_tvalid && s_axis_h2c0_tready && s_axis_h2c0_tlast));
            cover_dma_onwards: cover (MM ? (m_axi_ddr_awvalid && m_axi_ddr_awready)
                : (s_axis_h2c0_tvalid && s_axis_h2c0_tready && !s_axis_h2c0_tlast));
        end
        cover_reset_mid_read: cover (!axi_aresetn && $past(s_axil_rvalid && !s_axil_rready));
    end

`endif

endmodule

`resetall
