/*
 * Two-to-one AXI4 write arbiter, fair at burst granularity.
 *
 * s_axi (the DMA engine, with IDs) and s_axi_cap (the capture writer, no IDs) share one
 * write master. A burst is granted whole: its address, then all its data beats; when both
 * masters wait, grants alternate. The master's ID gains one bit on top that says whose burst
 * it is (0: s_axi, 1: s_axi_cap); write responses are routed back by that bit, so they may
 * return in any order.
 *
 * Timing: the address is taken into a register (the AWREADYs are registers), the data beats
 * and responses pass through a multiplexer set by the registered grant. Between bursts the
 * arbiter spends 3 cycles (decide, accept, hand over the address) before the first data beat.
 * WLAST towards the master is generated from AWLEN, so a source's WLAST is not trusted.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_wr_arbiter #
(
    // Width of the data bus in bits
    parameter DATA_WIDTH = 128,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 64,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of s_axi's ID; the master's ID is one bit wider
    parameter ID_WIDTH = 4
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI4 write slave: DMA engine
     */
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
     * AXI4 write slave: capture writer (no IDs)
     */
    input  wire [ADDR_WIDTH-1:0]  s_axi_cap_awaddr,
    input  wire [7:0]             s_axi_cap_awlen,
    input  wire [2:0]             s_axi_cap_awsize,
    input  wire [1:0]             s_axi_cap_awburst,
    input  wire                   s_axi_cap_awvalid,
    output wire                   s_axi_cap_awready,
    input  wire [DATA_WIDTH-1:0]  s_axi_cap_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axi_cap_wstrb,
    input  wire                   s_axi_cap_wlast,
    input  wire                   s_axi_cap_wvalid,
    output wire                   s_axi_cap_wready,
    output wire [1:0]             s_axi_cap_bresp,
    output wire                   s_axi_cap_bvalid,
    input  wire                   s_axi_cap_bready,

    /*
     * AXI4 write master
     */
    output wire [ID_WIDTH:0]      m_axi_awid,
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
    input  wire [ID_WIDTH:0]      m_axi_bid,
    input  wire [1:0]             m_axi_bresp,
    input  wire                   m_axi_bvalid,
    output wire                   m_axi_bready
);

// check configuration
initial begin
    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end

    if (ID_WIDTH < 1) begin
        $error("Error: ID_WIDTH must be at least 1 (instance %m)");
        $finish;
    end
end

localparam [1:0]
    STATE_IDLE = 2'd0,
    STATE_ACCEPT = 2'd1,
    STATE_ADDR = 2'd2,
    STATE_DATA = 2'd3;

// Source of a burst, also the top bit of the master's ID
localparam [0:0]
    SRC_DMA = 1'b0,
    SRC_CAP = 1'b1;

// Cache attributes of capture bursts: normal non-cacheable bufferable
localparam [3:0] CAP_CACHE = 4'b0011;

reg [1:0] state_reg = STATE_IDLE;
reg [0:0] grant_reg = SRC_DMA;
reg [0:0] last_grant_reg = SRC_CAP;
reg [7:0] beats_left_reg = 8'd0;

reg s_axi_awready_reg = 1'b0;
reg s_axi_cap_awready_reg = 1'b0;

reg [ID_WIDTH:0]     m_axi_awid_reg = {ID_WIDTH+1{1'b0}};
reg [ADDR_WIDTH-1:0] m_axi_awaddr_reg = {ADDR_WIDTH{1'b0}};
reg [7:0]            m_axi_awlen_reg = 8'd0;
reg [2:0]            m_axi_awsize_reg = 3'd0;
reg [1:0]            m_axi_awburst_reg = 2'd0;
reg                  m_axi_awlock_reg = 1'b0;
reg [3:0]            m_axi_awcache_reg = 4'd0;
reg [2:0]            m_axi_awprot_reg = 3'd0;
reg                  m_axi_awvalid_reg = 1'b0;

wire data_phase = state_reg == STATE_DATA;
wire from_cap = grant_reg == SRC_CAP;

assign s_axi_awready = s_axi_awready_reg;
assign s_axi_cap_awready = s_axi_cap_awready_reg;

assign m_axi_awid = m_axi_awid_reg;
assign m_axi_awaddr = m_axi_awaddr_reg;
assign m_axi_awlen = m_axi_awlen_reg;
assign m_axi_awsize = m_axi_awsize_reg;
assign m_axi_awburst = m_axi_awburst_reg;
assign m_axi_awlock = m_axi_awlock_reg;
assign m_axi_awcache = m_axi_awcache_reg;
assign m_axi_awprot = m_axi_awprot_reg;
assign m_axi_awvalid = m_axi_awvalid_reg;

// Data beats follow the grant.
assign m_axi_wdata = from_cap ? s_axi_cap_wdata : s_axi_wdata;
assign m_axi_wstrb = from_cap ? s_axi_cap_wstrb : s_axi_wstrb;
assign m_axi_wlast = beats_left_reg == 8'd0;
assign m_axi_wvalid = data_phase && (from_cap ? s_axi_cap_wvalid : s_axi_wvalid);
assign s_axi_wready = data_phase && !from_cap && m_axi_wready;
assign s_axi_cap_wready = data_phase && from_cap && m_axi_wready;

// Responses go back by the ID's top bit.
assign s_axi_bid = m_axi_bid[ID_WIDTH-1:0];
assign s_axi_bresp = m_axi_bresp;
assign s_axi_bvalid = m_axi_bvalid && m_axi_bid[ID_WIDTH] == SRC_DMA;
assign s_axi_cap_bresp = m_axi_bresp;
assign s_axi_cap_bvalid = m_axi_bvalid && m_axi_bid[ID_WIDTH] == SRC_CAP;
assign m_axi_bready = m_axi_bid[ID_WIDTH] == SRC_CAP ? s_axi_cap_bready : s_axi_bready;

// The sources' WLAST is replaced by the beat count.
wire unused = &{1'b0, s_axi_wlast, s_axi_cap_wlast, 1'b0};

always @(posedge clk) begin
    case (state_reg)
        STATE_IDLE: begin
            // Alternate when both wait; otherwise take whichever does.
            if (s_axi_awvalid && s_axi_cap_awvalid) begin
                grant_reg <= last_grant_reg == SRC_DMA ? SRC_CAP : SRC_DMA;
                s_axi_awready_reg <= last_grant_reg != SRC_DMA;
                s_axi_cap_awready_reg <= last_grant_reg == SRC_DMA;
                state_reg <= STATE_ACCEPT;
            end else if (s_axi_awvalid) begin
                grant_reg <= SRC_DMA;
                s_axi_awready_reg <= 1'b1;
                state_reg <= STATE_ACCEPT;
            end else if (s_axi_cap_awvalid) begin
                grant_reg <= SRC_CAP;
                s_axi_cap_awready_reg <= 1'b1;
                state_reg <= STATE_ACCEPT;
            end
        end
        STATE_ACCEPT: begin
            // The granted source holds AWVALID until its handshake, which is this edge.
            s_axi_awready_reg <= 1'b0;
            s_axi_cap_awready_reg <= 1'b0;
            if (from_cap) begin
                m_axi_awid_reg <= {SRC_CAP, {ID_WIDTH{1'b0}}};
                m_axi_awaddr_reg <= s_axi_cap_awaddr;
                m_axi_awlen_reg <= s_axi_cap_awlen;
                m_axi_awsize_reg <= s_axi_cap_awsize;
                m_axi_awburst_reg <= s_axi_cap_awburst;
                m_axi_awlock_reg <= 1'b0;
                m_axi_awcache_reg <= CAP_CACHE;
                m_axi_awprot_reg <= 3'd0;
                beats_left_reg <= s_axi_cap_awlen;
            end else begin
                m_axi_awid_reg <= {SRC_DMA, s_axi_awid};
                m_axi_awaddr_reg <= s_axi_awaddr;
                m_axi_awlen_reg <= s_axi_awlen;
                m_axi_awsize_reg <= s_axi_awsize;
                m_axi_awburst_reg <= s_axi_awburst;
                m_axi_awlock_reg <= s_axi_awlock;
                m_axi_awcache_reg <= s_axi_awcache;
                m_axi_awprot_reg <= s_axi_awprot;
                beats_left_reg <= s_axi_awlen;
            end
            m_axi_awvalid_reg <= 1'b1;
            last_grant_reg <= grant_reg;
            state_reg <= STATE_ADDR;
        end
        STATE_ADDR: begin
            if (m_axi_awready) begin
                m_axi_awvalid_reg <= 1'b0;
                state_reg <= STATE_DATA;
            end
        end
        default: begin
            if (m_axi_wvalid && m_axi_wready) begin
                beats_left_reg <= beats_left_reg - 8'd1;
                if (beats_left_reg == 8'd0) begin
                    state_reg <= STATE_IDLE;
                end
            end
        end
    endcase

    if (rst) begin
        state_reg <= STATE_IDLE;
        last_grant_reg <= SRC_CAP;
        s_axi_awready_reg <= 1'b0;
        s_axi_cap_awready_reg <= 1'b0;
        m_axi_awvalid_reg <= 1'b0;
    end
end

endmodule

`resetall
