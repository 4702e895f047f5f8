/*
 * Asynchronous FIFO with valid/ready interfaces on both sides.
 *
 * - Depth is a power of two (2**ADDR_WIDTH entries); pointers carry one extra bit to tell
 *   full from empty and cross the domains as Gray code through two-flop synchronizers, so at
 *   most one bit changes between samples.
 * - Every output is a register: s_ready is the registered "not full" flag (computed against a
 *   synchronized, hence conservative, read pointer), m_data/m_valid are an output register
 *   stage loaded from the memory. Nothing crosses the domains except the synchronized Gray
 *   pointers and the reset requests, and no combinational path joins the two clocks.
 * - One entry per cycle on each side when the other side keeps up. The synchronizers make a
 *   written entry visible to the reader 3 to 4 m_clk cycles later; m_valid follows one cycle
 *   after that.
 * - Reset: s_rst and m_rst are synchronous to their own clocks. Each is also carried into the
 *   other domain through a two-flop synchronizer, so asserting either empties the whole FIFO.
 *   Hold a reset for at least 3 cycles of the slower clock so the other side sees it.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module async_fifo #
(
    // Width of one entry in bits
    parameter DATA_WIDTH = 8,
    // log2 of the depth: the FIFO holds 2**ADDR_WIDTH entries (at least 4)
    parameter ADDR_WIDTH = 4
)
(
    /*
     * Write side (s_clk domain)
     */
    input  wire                  s_clk,
    input  wire                  s_rst,
    input  wire [DATA_WIDTH-1:0] s_data,
    input  wire                  s_valid,
    output wire                  s_ready,

    /*
     * Read side (m_clk domain)
     */
    input  wire                  m_clk,
    input  wire                  m_rst,
    output wire [DATA_WIDTH-1:0] m_data,
    output wire                  m_valid,
    input  wire                  m_ready
);

localparam DEPTH = 2**ADDR_WIDTH;

// check configuration
initial begin
    if (ADDR_WIDTH < 2 || ADDR_WIDTH > 16) begin
        $error("Error: ADDR_WIDTH must be 2 to 16 (depth 4 to 65536) (instance %m)");
        $finish;
    end

    if (DATA_WIDTH < 1) begin
        $error("Error: DATA_WIDTH must be at least 1 (instance %m)");
        $finish;
    end
end

function [ADDR_WIDTH:0] bin2gray(input [ADDR_WIDTH:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

reg [DATA_WIDTH-1:0] mem[DEPTH-1:0];

/*
 * Reset crossing: each domain is held in reset while the other one is.
 */
reg s_rst_req_sync1 = 1'b1, s_rst_req_sync2 = 1'b1;  // m_rst seen in s_clk
reg m_rst_req_sync1 = 1'b1, m_rst_req_sync2 = 1'b1;  // s_rst seen in m_clk

always @(posedge s_clk) begin
    s_rst_req_sync1 <= m_rst;
    s_rst_req_sync2 <= s_rst_req_sync1;
end

always @(posedge m_clk) begin
    m_rst_req_sync1 <= s_rst;
    m_rst_req_sync2 <= m_rst_req_sync1;
end

wire s_rst_all = s_rst || s_rst_req_sync2;
wire m_rst_all = m_rst || m_rst_req_sync2;

/*
 * Write side
 */
reg [ADDR_WIDTH:0] wr_ptr_bin = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] wr_ptr_gray = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] rd_ptr_gray_sync1 = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] rd_ptr_gray_sync2 = {ADDR_WIDTH+1{1'b0}};
reg full_reg = 1'b1;

wire s_fire = s_valid && !full_reg;
wire [ADDR_WIDTH:0] wr_ptr_bin_next = wr_ptr_bin + {{ADDR_WIDTH{1'b0}}, s_fire};
wire [ADDR_WIDTH:0] wr_ptr_gray_next = bin2gray(wr_ptr_bin_next);
// Full when the write pointer is one lap ahead: the two top Gray bits differ, the rest match.
wire full_next = wr_ptr_gray_next == {~rd_ptr_gray_sync2[ADDR_WIDTH:ADDR_WIDTH-1],
    rd_ptr_gray_sync2[ADDR_WIDTH-2:0]};

assign s_ready = !full_reg;

always @(posedge s_clk) begin
    if (s_fire) begin
        mem[wr_ptr_bin[ADDR_WIDTH-1:0]] <= s_data;
    end
    wr_ptr_bin <= wr_ptr_bin_next;
    wr_ptr_gray <= wr_ptr_gray_next;
    full_reg <= full_next;
    rd_ptr_gray_sync1 <= rd_ptr_gray;
    rd_ptr_gray_sync2 <= rd_ptr_gray_sync1;

    if (s_rst_all) begin
        wr_ptr_bin <= {ADDR_WIDTH+1{1'b0}};
        wr_ptr_gray <= {ADDR_WIDTH+1{1'b0}};
        rd_ptr_gray_sync1 <= {ADDR_WIDTH+1{1'b0}};
        rd_ptr_gray_sync2 <= {ADDR_WIDTH+1{1'b0}};
        // Not ready during reset, so nothing is accepted that the reset would lose.
        full_reg <= 1'b1;
    end
end

/*
 * Read side
 */
reg [ADDR_WIDTH:0] rd_ptr_bin = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] rd_ptr_gray = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] wr_ptr_gray_sync1 = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] wr_ptr_gray_sync2 = {ADDR_WIDTH+1{1'b0}};
reg [DATA_WIDTH-1:0] m_data_reg = {DATA_WIDTH{1'b0}};
reg m_valid_reg = 1'b0;

wire empty = rd_ptr_gray == wr_ptr_gray_sync2;
// Load the output register when it is free or being emptied this cycle.
wire load = !empty && (!m_valid_reg || m_ready);
wire [ADDR_WIDTH:0] rd_ptr_bin_next = rd_ptr_bin + {{ADDR_WIDTH{1'b0}}, load};

assign m_data = m_data_reg;
assign m_valid = m_valid_reg;

always @(posedge m_clk) begin
    if (load) begin
        m_data_reg <= mem[rd_ptr_bin[ADDR_WIDTH-1:0]];
        m_valid_reg <= 1'b1;
    end else if (m_ready) begin
        m_valid_reg <= 1'b0;
    end
    rd_ptr_bin <= rd_ptr_bin_next;
    rd_ptr_gray <= bin2gray(rd_ptr_bin_next);
    wr_ptr_gray_sync1 <= wr_ptr_gray;
    wr_ptr_gray_sync2 <= wr_ptr_gray_sync1;

    if (m_rst_all) begin
        rd_ptr_bin <= {ADDR_WIDTH+1{1'b0}};
        rd_ptr_gray <= {ADDR_WIDTH+1{1'b0}};
        wr_ptr_gray_sync1 <= {ADDR_WIDTH+1{1'b0}};
        wr_ptr_gray_sync2 <= {ADDR_WIDTH+1{1'b0}};
        m_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
