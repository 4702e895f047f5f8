/*
 * Simulation-only test top for ddr3_model: two instances side by side on one clock, one with
 * the model's default DDR3-1600 timing (ddr_std) and one with deliberately different timing
 * (ddr_alt), so that a test can show that latency follows the parameters and that each
 * instance keeps storage of its own. The timing and arbitration parameters of both are on
 * output ports, so the test compares its measurements with the values the RTL really uses.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddr3_model_tb #
(
    // Width of the AXI data bus in bits
    parameter DATA_WIDTH = 512,
    // Width of the AXI byte address in bits
    parameter ADDR_WIDTH = 31,
    // Width of the AXI ID
    parameter ID_WIDTH = 5,
    // Width of the write strobe
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // ddr_alt: CL, in clk cycles
    parameter ALT_CL = 5,
    // ddr_alt: T_RCD, in clk cycles
    parameter ALT_T_RCD = 4,
    // ddr_alt: T_RP, in clk cycles
    parameter ALT_T_RP = 6,
    // ddr_alt: T_RAS, in clk cycles
    parameter ALT_T_RAS = 12,
    // ddr_alt: T_WR, in clk cycles
    parameter ALT_T_WR = 5,
    // ddr_alt: T_RFC, in clk cycles
    parameter ALT_T_RFC = 40,
    // ddr_alt: T_REFI, in clk cycles
    parameter ALT_T_REFI = 400,
    // ddr_alt: CTRL_LAT, in clk cycles
    parameter ALT_CTRL_LAT = 7,
    // ddr_alt: T_RTP, in clk cycles
    parameter ALT_T_RTP = 3,
    // ddr_alt: T_WTR, in clk cycles
    parameter ALT_T_WTR = 6,
    // ddr_alt: T_RTW, in clk cycles
    parameter ALT_T_RTW = 4,
    // ddr_alt: T_RRD, in clk cycles (above the model's two-cycle spacing of bursts, so visible)
    parameter ALT_T_RRD = 4,
    // ddr_alt: T_FAW, in clk cycles (above 4 T_RRD, so the fifth ACT waits for it)
    parameter ALT_T_FAW = 20,
    // ddr_alt: HOLD_BEATS (1: the direction changes at every burst boundary when both wait)
    parameter ALT_HOLD_BEATS = 1,
    // ddr_alt: HOLD_IDLE, in clk cycles
    parameter ALT_HOLD_IDLE = 8
)
(
    input  wire                    clk,
    input  wire                    rst,

    /*
     * Read/write arbitration scheme of both instances (ddr3_model's arb_algorithm)
     */
    input  wire [1:0]              arb_algorithm,

    /*
     * AXI4 slave of instance ddr_std (DDR3-1600 defaults)
     */
    input  wire [ID_WIDTH-1:0]     s0_axi_awid,
    input  wire [ADDR_WIDTH-1:0]   s0_axi_awaddr,
    input  wire [7:0]              s0_axi_awlen,
    input  wire [2:0]              s0_axi_awsize,
    input  wire [1:0]              s0_axi_awburst,
    input  wire                    s0_axi_awlock,
    input  wire [3:0]              s0_axi_awcache,
    input  wire [2:0]              s0_axi_awprot,
    input  wire [3:0]              s0_axi_awqos,
    input  wire                    s0_axi_awvalid,
    output wire                    s0_axi_awready,
    input  wire [DATA_WIDTH-1:0]   s0_axi_wdata,
    input  wire [STRB_WIDTH-1:0]   s0_axi_wstrb,
    input  wire                    s0_axi_wlast,
    input  wire                    s0_axi_wvalid,
    output wire                    s0_axi_wready,
    output wire [ID_WIDTH-1:0]     s0_axi_bid,
    output wire [1:0]              s0_axi_bresp,
    output wire                    s0_axi_bvalid,
    input  wire                    s0_axi_bready,
    input  wire [ID_WIDTH-1:0]     s0_axi_arid,
    input  wire [ADDR_WIDTH-1:0]   s0_axi_araddr,
    input  wire [7:0]              s0_axi_arlen,
    input  wire [2:0]              s0_axi_arsize,
    input  wire [1:0]              s0_axi_arburst,
    input  wire                    s0_axi_arlock,
    input  wire [3:0]              s0_axi_arcache,
    input  wire [2:0]              s0_axi_arprot,
    input  wire [3:0]              s0_axi_arqos,
    input  wire                    s0_axi_arvalid,
    output wire                    s0_axi_arready,
    output wire [ID_WIDTH-1:0]     s0_axi_rid,
    output wire [DATA_WIDTH-1:0]   s0_axi_rdata,
    output wire [1:0]              s0_axi_rresp,
    output wire                    s0_axi_rlast,
    output wire                    s0_axi_rvalid,
    input  wire                    s0_axi_rready,

    /*
     * AXI4 slave of instance ddr_alt (other timing)
     */
    input  wire [ID_WIDTH-1:0]     s1_axi_awid,
    input  wire [ADDR_WIDTH-1:0]   s1_axi_awaddr,
    input  wire [7:0]              s1_axi_awlen,
    input  wire [2:0]              s1_axi_awsize,
    input  wire [1:0]              s1_axi_awburst,
    input  wire                    s1_axi_awlock,
    input  wire [3:0]              s1_axi_awcache,
    input  wire [2:0]              s1_axi_awprot,
    input  wire [3:0]              s1_axi_awqos,
    input  wire                    s1_axi_awvalid,
    output wire                    s1_axi_awready,
    input  wire [DATA_WIDTH-1:0]   s1_axi_wdata,
    input  wire [STRB_WIDTH-1:0]   s1_axi_wstrb,
    input  wire                    s1_axi_wlast,
    input  wire                    s1_axi_wvalid,
    output wire                    s1_axi_wready,
    output wire [ID_WIDTH-1:0]     s1_axi_bid,
    output wire [1:0]              s1_axi_bresp,
    output wire                    s1_axi_bvalid,
    input  wire                    s1_axi_bready,
    input  wire [ID_WIDTH-1:0]     s1_axi_arid,
    input  wire [ADDR_WIDTH-1:0]   s1_axi_araddr,
    input  wire [7:0]              s1_axi_arlen,
    input  wire [2:0]              s1_axi_arsize,
    input  wire [1:0]              s1_axi_arburst,
    input  wire                    s1_axi_arlock,
    input  wire [3:0]              s1_axi_arcache,
    input  wire [2:0]              s1_axi_arprot,
    input  wire [3:0]              s1_axi_arqos,
    input  wire                    s1_axi_arvalid,
    output wire                    s1_axi_arready,
    output wire [ID_WIDTH-1:0]     s1_axi_rid,
    output wire [DATA_WIDTH-1:0]   s1_axi_rdata,
    output wire [1:0]              s1_axi_rresp,
    output wire                    s1_axi_rlast,
    output wire                    s1_axi_rvalid,
    input  wire                    s1_axi_rready,

    /*
     * Timing of ddr_std, for the test to compare its measurements with
     */
    output wire [15:0]             std_cl,
    output wire [15:0]             std_t_rcd,
    output wire [15:0]             std_t_rp,
    output wire [15:0]             std_t_ras,
    output wire [15:0]             std_t_wr,
    output wire [15:0]             std_t_rfc,
    output wire [15:0]             std_t_refi,
    output wire [15:0]             std_ctrl_lat,
    output wire [15:0]             std_t_rtp,
    output wire [15:0]             std_t_wtr,
    output wire [15:0]             std_t_rtw,
    output wire [15:0]             std_t_rrd,
    output wire [15:0]             std_t_faw,
    output wire [15:0]             std_hold_beats,
    output wire [15:0]             std_hold_idle,

    /*
     * Timing of ddr_alt, for the test to compare its measurements with
     */
    output wire [15:0]             alt_cl,
    output wire [15:0]             alt_t_rcd,
    output wire [15:0]             alt_t_rp,
    output wire [15:0]             alt_t_ras,
    output wire [15:0]             alt_t_wr,
    output wire [15:0]             alt_t_rfc,
    output wire [15:0]             alt_t_refi,
    output wire [15:0]             alt_ctrl_lat,
    output wire [15:0]             alt_t_rtp,
    output wire [15:0]             alt_t_wtr,
    output wire [15:0]             alt_t_rtw,
    output wire [15:0]             alt_t_rrd,
    output wire [15:0]             alt_t_faw,
    output wire [15:0]             alt_hold_beats,
    output wire [15:0]             alt_hold_idle
);

// check configuration
initial begin
    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end
end

assign std_cl = ddr_std.CL;
assign std_t_rcd = ddr_std.T_RCD;
assign std_t_rp = ddr_std.T_RP;
assign std_t_ras = ddr_std.T_RAS;
assign std_t_wr = ddr_std.T_WR;
assign std_t_rfc = ddr_std.T_RFC;
assign std_t_refi = ddr_std.T_REFI;
assign std_ctrl_lat = ddr_std.CTRL_LAT;
assign std_t_rtp = ddr_std.T_RTP;
assign std_t_wtr = ddr_std.T_WTR;
assign std_t_rtw = ddr_std.T_RTW;
assign std_t_rrd = ddr_std.T_RRD;
assign std_t_faw = ddr_std.T_FAW;
assign std_hold_beats = ddr_std.HOLD_BEATS;
assign std_hold_idle = ddr_std.HOLD_IDLE;
assign alt_cl = ALT_CL;
assign alt_t_rcd = ALT_T_RCD;
assign alt_t_rp = ALT_T_RP;
assign alt_t_ras = ALT_T_RAS;
assign alt_t_wr = ALT_T_WR;
assign alt_t_rfc = ALT_T_RFC;
assign alt_t_refi = ALT_T_REFI;
assign alt_ctrl_lat = ALT_CTRL_LAT;
assign alt_t_rtp = ALT_T_RTP;
assign alt_t_wtr = ALT_T_WTR;
assign alt_t_rtw = ALT_T_RTW;
assign alt_t_rrd = ALT_T_RRD;
assign alt_t_faw = ALT_T_FAW;
assign alt_hold_beats = ALT_HOLD_BEATS;
assign alt_hold_idle = ALT_HOLD_IDLE;

// Default parameters: this instance is the model exactly as sim_top uses it.
ddr3_model #(
    .DATA_WIDTH(DATA_WIDTH),
    .ADDR_WIDTH(ADDR_WIDTH),
    .ID_WIDTH(ID_WIDTH)
)
ddr_std (
    .clk(clk),
    .rst(rst),
    .arb_algorithm(arb_algorithm),
    .s_axi_awid(s0_axi_awid),
    .s_axi_awaddr(s0_axi_awaddr),
    .s_axi_awlen(s0_axi_awlen),
    .s_axi_awsize(s0_axi_awsize),
    .s_axi_awburst(s0_axi_awburst),
    .s_axi_awlock(s0_axi_awlock),
    .s_axi_awcache(s0_axi_awcache),
    .s_axi_awprot(s0_axi_awprot),
    .s_axi_awqos(s0_axi_awqos),
    .s_axi_awvalid(s0_axi_awvalid),
    .s_axi_awready(s0_axi_awready),
    .s_axi_wdata(s0_axi_wdata),
    .s_axi_wstrb(s0_axi_wstrb),
    .s_axi_wlast(s0_axi_wlast),
    .s_axi_wvalid(s0_axi_wvalid),
    .s_axi_wready(s0_axi_wready),
    .s_axi_bid(s0_axi_bid),
    .s_axi_bresp(s0_axi_bresp),
    .s_axi_bvalid(s0_axi_bvalid),
    .s_axi_bready(s0_axi_bready),
    .s_axi_arid(s0_axi_arid),
    .s_axi_araddr(s0_axi_araddr),
    .s_axi_arlen(s0_axi_arlen),
    .s_axi_arsize(s0_axi_arsize),
    .s_axi_arburst(s0_axi_arburst),
    .s_axi_arlock(s0_axi_arlock),
    .s_axi_arcache(s0_axi_arcache),
    .s_axi_arprot(s0_axi_arprot),
    .s_axi_arqos(s0_axi_arqos),
    .s_axi_arvalid(s0_axi_arvalid),
    .s_axi_arready(s0_axi_arready),
    .s_axi_rid(s0_axi_rid),
    .s_axi_rdata(s0_axi_rdata),
    .s_axi_rresp(s0_axi_rresp),
    .s_axi_rlast(s0_axi_rlast),
    .s_axi_rvalid(s0_axi_rvalid),
    .s_axi_rready(s0_axi_rready)
);

ddr3_model #(
    .DATA_WIDTH(DATA_WIDTH),
    .ADDR_WIDTH(ADDR_WIDTH),
    .ID_WIDTH(ID_WIDTH),
    .CL(ALT_CL),
    .T_RCD(ALT_T_RCD),
    .T_RP(ALT_T_RP),
    .T_RAS(ALT_T_RAS),
    .T_WR(ALT_T_WR),
    .T_RFC(ALT_T_RFC),
    .T_REFI(ALT_T_REFI),
    .CTRL_LAT(ALT_CTRL_LAT),
    .T_RTP(ALT_T_RTP),
    .T_WTR(ALT_T_WTR),
    .T_RTW(ALT_T_RTW),
    .T_RRD(ALT_T_RRD),
    .T_FAW(ALT_T_FAW),
    .HOLD_BEATS(ALT_HOLD_BEATS),
    .HOLD_IDLE(ALT_HOLD_IDLE)
)
ddr_alt (
    .clk(clk),
    .rst(rst),
    .arb_algorithm(arb_algorithm),
    .s_axi_awid(s1_axi_awid),
    .s_axi_awaddr(s1_axi_awaddr),
    .s_axi_awlen(s1_axi_awlen),
    .s_axi_awsize(s1_axi_awsize),
    .s_axi_awburst(s1_axi_awburst),
    .s_axi_awlock(s1_axi_awlock),
    .s_axi_awcache(s1_axi_awcache),
    .s_axi_awprot(s1_axi_awprot),
    .s_axi_awqos(s1_axi_awqos),
    .s_axi_awvalid(s1_axi_awvalid),
    .s_axi_awready(s1_axi_awready),
    .s_axi_wdata(s1_axi_wdata),
    .s_axi_wstrb(s1_axi_wstrb),
    .s_axi_wlast(s1_axi_wlast),
    .s_axi_wvalid(s1_axi_wvalid),
    .s_axi_wready(s1_axi_wready),
    .s_axi_bid(s1_axi_bid),
    .s_axi_bresp(s1_axi_bresp),
    .s_axi_bvalid(s1_axi_bvalid),
    .s_axi_bready(s1_axi_bready),
    .s_axi_arid(s1_axi_arid),
    .s_axi_araddr(s1_axi_araddr),
    .s_axi_arlen(s1_axi_arlen),
    .s_axi_arsize(s1_axi_arsize),
    .s_axi_arburst(s1_axi_arburst),
    .s_axi_arlock(s1_axi_arlock),
    .s_axi_arcache(s1_axi_arcache),
    .s_axi_arprot(s1_axi_arprot),
    .s_axi_arqos(s1_axi_arqos),
    .s_axi_arvalid(s1_axi_arvalid),
    .s_axi_arready(s1_axi_arready),
    .s_axi_rid(s1_axi_rid),
    .s_axi_rdata(s1_axi_rdata),
    .s_axi_rresp(s1_axi_rresp),
    .s_axi_rlast(s1_axi_rlast),
    .s_axi_rvalid(s1_axi_rvalid),
    .s_axi_rready(s1_axi_rready)
);

endmodule

`resetall
