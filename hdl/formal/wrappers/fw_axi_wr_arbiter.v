/*
 * Proof wrapper of axi_wr_arbiter: both write slaves (the DMA port and the capture port,
 * which has no ID) are checked as AXI4 slaves (the masters' rules assumed), the merged port as
 * a master (its rules asserted); none has read channels, which are tied idle. What the arbiter
 * promises besides the protocol: a write response goes back to the source its ID's top bit
 * names (0 the DMA port, with the rest of the ID; 1 the capture port), as it comes, and only
 * there.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axi_wr_arbiter #
(
    // Width of the data buses in bits (narrow, so that the solver's state stays small)
    parameter DATA_WIDTH = 32,
    // Width of the addresses in bits
    parameter ADDR_WIDTH = 32,
    // Width of the strobes
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of the DMA port's ID (the merged port's is one more)
    parameter ID_WIDTH = 1
)
(
    input  wire                   clk,
    input  wire                   rst,
    input  wire [ID_WIDTH-1:0]    s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_awaddr,
    input  wire [7:0]             s_axi_awlen,
    input  wire [2:0]             s_axi_awsize,
    input  wire [1:0]             s_axi_awburst,
    input  wire                   s_axi_awlock,
    input  wire [3:0]             s_axi_awcache,
    input  wire [2:0]             s_axi_awprot,
    input  wire                   s_axi_awvalid,
    input  wire [DATA_WIDTH-1:0]  s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axi_wstrb,
    input  wire                   s_axi_wlast,
    input  wire                   s_axi_wvalid,
    input  wire                   s_axi_bready,
    input  wire [ADDR_WIDTH-1:0]  s_axi_cap_awaddr,
    input  wire [7:0]             s_axi_cap_awlen,
    input  wire [2:0]             s_axi_cap_awsize,
    input  wire [1:0]             s_axi_cap_awburst,
    input  wire                   s_axi_cap_awvalid,
    input  wire [DATA_WIDTH-1:0]  s_axi_cap_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axi_cap_wstrb,
    input  wire                   s_axi_cap_wlast,
    input  wire                   s_axi_cap_wvalid,
    input  wire                   s_axi_cap_bready,
    input  wire                   m_axi_awready,
    input  wire                   m_axi_wready,
    input  wire [ID_WIDTH:0]      m_axi_bid,
    input  wire [1:0]             m_axi_bresp,
    input  wire                   m_axi_bvalid
);

`ifdef FORMAL

    wire                   s_axi_awready;
    wire                   s_axi_wready;
    wire [ID_WIDTH-1:0]    s_axi_bid;
    wire [1:0]             s_axi_bresp;
    wire                   s_axi_bvalid;
    wire                   s_axi_cap_awready;
    wire                   s_axi_cap_wready;
    wire [1:0]             s_axi_cap_bresp;
    wire                   s_axi_cap_bvalid;
    wire [ID_WIDTH:0]      m_axi_awid;
    wire [ADDR_WIDTH-1:0]  m_axi_awaddr;
    wire [7:0]             m_axi_awlen;
    wire [2:0]             m_axi_awsize;
    wire [1:0]             m_axi_awburst;
    wire                   m_axi_awlock;
    wire [3:0]             m_axi_awcache;
    wire [2:0]             m_axi_awprot;
    wire                   m_axi_awvalid;
    wire [DATA_WIDTH-1:0]  m_axi_wdata;
    wire [STRB_WIDTH-1:0]  m_axi_wstrb;
    wire                   m_axi_wlast;
    wire                   m_axi_wvalid;
    wire                   m_axi_bready;

    axi_wr_arbiter #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .STRB_WIDTH(STRB_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) dut (
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
        .s_axi_wdata(s_axi_wdata),
        .s_axi_wstrb(s_axi_wstrb),
        .s_axi_wlast(s_axi_wlast),
        .s_axi_wvalid(s_axi_wvalid),
        .s_axi_bready(s_axi_bready),
        .s_axi_cap_awaddr(s_axi_cap_awaddr),
        .s_axi_cap_awlen(s_axi_cap_awlen),
        .s_axi_cap_awsize(s_axi_cap_awsize),
        .s_axi_cap_awburst(s_axi_cap_awburst),
        .s_axi_cap_awvalid(s_axi_cap_awvalid),
        .s_axi_cap_wdata(s_axi_cap_wdata),
        .s_axi_cap_wstrb(s_axi_cap_wstrb),
        .s_axi_cap_wlast(s_axi_cap_wlast),
        .s_axi_cap_wvalid(s_axi_cap_wvalid),
        .s_axi_cap_bready(s_axi_cap_bready),
        .m_axi_awready(m_axi_awready),
        .m_axi_wready(m_axi_wready),
        .m_axi_bid(m_axi_bid),
        .m_axi_bresp(m_axi_bresp),
        .m_axi_bvalid(m_axi_bvalid),
        .s_axi_awready(s_axi_awready),
        .s_axi_wready(s_axi_wready),
        .s_axi_bid(s_axi_bid),
        .s_axi_bresp(s_axi_bresp),
        .s_axi_bvalid(s_axi_bvalid),
        .s_axi_cap_awready(s_axi_cap_awready),
        .s_axi_cap_wready(s_axi_cap_wready),
        .s_axi_cap_bresp(s_axi_cap_bresp),
        .s_axi_cap_bvalid(s_axi_cap_bvalid),
        .m_axi_awid(m_axi_awid),
        .m_axi_awaddr(m_axi_awaddr),
        .m_axi_awlen(m_axi_awlen),
        .m_axi_awsize(m_axi_awsize),
        .m_axi_awburst(m_axi_awburst),
        .m_axi_awlock(m_axi_awlock),
        .m_axi_awcache(m_axi_awcache),
        .m_axi_awprot(m_axi_awprot),
        .m_axi_awvalid(m_axi_awvalid),
        .m_axi_wdata(m_axi_wdata),
        .m_axi_wstrb(m_axi_wstrb),
        .m_axi_wlast(m_axi_wlast),
        .m_axi_wvalid(m_axi_wvalid),
        .m_axi_bready(m_axi_bready)
    );

    faxi_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_dma (
        .clk(clk),
        .rst(rst),
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
        .arid({ID_WIDTH{1'b0}}),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({ID_WIDTH{1'b0}}),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    faxi_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(1)
    ) f_cap (
        .clk(clk),
        .rst(rst),
        .awid(1'b0),
        .awaddr(s_axi_cap_awaddr),
        .awlen(s_axi_cap_awlen),
        .awsize(s_axi_cap_awsize),
        .awburst(s_axi_cap_awburst),
        .awvalid(s_axi_cap_awvalid),
        .awready(s_axi_cap_awready),
        .wdata(s_axi_cap_wdata),
        .wstrb(s_axi_cap_wstrb),
        .wlast(s_axi_cap_wlast),
        .wvalid(s_axi_cap_wvalid),
        .wready(s_axi_cap_wready),
        .bid(1'b0),
        .bresp(s_axi_cap_bresp),
        .bvalid(s_axi_cap_bvalid),
        .bready(s_axi_cap_bready),
        .arid({1{1'b0}}),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({1{1'b0}}),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    faxi_master #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH+1)
    ) f_out (
        .clk(clk),
        .rst(rst),
        .awid(m_axi_awid),
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
        .bid(m_axi_bid),
        .bresp(m_axi_bresp),
        .bvalid(m_axi_bvalid),
        .bready(m_axi_bready),
        .arid({ID_WIDTH+1{1'b0}}),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({ID_WIDTH+1{1'b0}}),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    wire f_to_cap = m_axi_bid[ID_WIDTH];

    always @(*) begin
        if (!rst) begin
            promise_b_to_dma: assert (s_axi_bvalid == (m_axi_bvalid && !f_to_cap));
            promise_b_to_cap: assert (s_axi_cap_bvalid == (m_axi_bvalid && f_to_cap));
            promise_b_id: assert (!s_axi_bvalid || s_axi_bid == m_axi_bid[ID_WIDTH-1:0]);
            promise_b_resp: assert ((!s_axi_bvalid || s_axi_bresp == m_axi_bresp)
                && (!s_axi_cap_bvalid || s_axi_cap_bresp == m_axi_bresp));
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_dma_burst: cover (m_axi_wvalid && m_axi_wready && m_axi_wlast && !m_axi_awid[ID_WIDTH]);
            cover_both_wait: cover (s_axi_awvalid && s_axi_cap_awvalid && !s_axi_awready && !s_axi_cap_awready);
            cover_cap_answered: cover (s_axi_cap_bvalid && s_axi_cap_bready);
        end
        cover_reset_mid_burst: cover (rst && $past(m_axi_wvalid && !m_axi_wlast));
    end

`endif

endmodule

`resetall
