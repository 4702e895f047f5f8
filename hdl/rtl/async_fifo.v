/*
 * Asynchronous FIFO with valid/ready interfaces on both sides.
 *
 * - Depth is a power of two (2**ADDR_WIDTH entries); pointers carry one extra bit to tell
 *   full from empty and cross the domains as Gray code through two-flop synchronizers, so at
 *   most one bit changes between samples.
 * - s_ready is the registered "not full" flag (computed against a synchronized, hence
 *   conservative, read pointer) gated by the reset state; m_data/m_valid are an output
 *   register stage loaded from the memory. Nothing crosses the domains except the synchronized Gray
 *   pointers and the reset requests, and no combinational path joins the two clocks.
 * - One entry per cycle on each side when the other side keeps up. The synchronizers make a
 *   written entry visible to the reader 3 to 4 m_clk cycles later; m_valid follows one cycle
 *   after that.
 * - Reset: s_rst and m_rst are synchronous to their own clocks, of any length (one cycle is
 *   enough), and either empties the whole FIFO through a handshake that keeps the two sides
 *   consistent:
 *   1. A side in reset is idle at once: s_ready low, or m_valid low.
 *   2. It raises a request that the other side synchronizes; the other side goes idle too and
 *      answers with an acknowledge, which the first side synchronizes back.
 *   3. Only a side whose peer is idle and held (acknowledged) clears its pointer, so the
 *      peer's synchronizer, which is held at zero meanwhile, never samples a pointer while it
 *      jumps; and a side leaves reset only when the peer has released its acknowledge, so
 *      neither side runs while the other's pointer is still being cleared.
 *   Entries inside the FIFO when a reset starts are discarded (that is the reset's job), and
 *   so are entries the writer accepted before it learned of a read-side reset (at most the
 *   two cycles of the request's synchronizer); everything accepted once s_ready is back high
 *   arrives, in order, and nothing else does. An entry already on m_data when the write side
 *   resets stays there until it is taken, as a valid must on AXI. s_rst_busy and m_rst_busy are high while the
 *   respective side is in reset or waiting for the handshake.
 * - Synchronizer flip-flops carry ASYNC_REG, so the tools place each chain in one slice and
 *   keep it out of retiming; the constraints give the Gray pointers a datapath-only maximum
 *   delay and the handshake false paths (fpga/card_core.xdc).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module async_fifo #
(
    // Width of one entry in bits
    parameter DATA_WIDTH = 8,
    // log2 of the depth: the FIFO holds 2**ADDR_WIDTH entries (at least 4)
    parameter ADDR_WIDTH = 4,
    // A seeded bug, for the proofs and tests that must catch it; 0 in every build of the card.
    // 1: a reset asks again at once even while the acknowledge of the side's last request is
    // still in its synchronizer, and takes that stale acknowledge for the answer (the
    // handshake as it was before a proof found this)
    parameter BUG = 0
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
    input  wire                  m_ready,

    /*
     * Reset status: the side is in reset or completing the reset handshake
     */
    output wire                  s_rst_busy,
    output wire                  m_rst_busy
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

    if (BUG < 0 || BUG > 1) begin
        $error("Error: BUG must be 0 or 1 (instance %m)");
        $finish;
    end
end

function [ADDR_WIDTH:0] bin2gray(input [ADDR_WIDTH:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

reg [DATA_WIDTH-1:0] mem[DEPTH-1:0];

/*
 * Reset handshake. Each side has a request (raised by its reset, held until the peer
 * acknowledges it) and an acknowledge (the peer's request seen). A reset is remembered (pend)
 * until its handshake is done, and its request is raised only once the acknowledge of the
 * side's previous request has been seen to fall: a reset that comes while that acknowledge is
 * still on its way back through the synchronizers would otherwise take it for the answer,
 * leave reset before the peer has seen the request, and run while the peer then clears its
 * pointer, after which the two pointers disagree and the reader reads entries nobody wrote. A
 * side is in reset (idle, its synchronizers held at zero) while its reset, its pending reset,
 * its request, the peer's request or its own acknowledge is up. It clears its pointer only
 * while the peer is known to be idle: the peer has acknowledged this request, or the peer is
 * itself asking.
 */
reg s_pend_reg = 1'b1;  // the write side has a reset whose handshake is not done
reg m_pend_reg = 1'b1;
reg s_req_reg = 1'b1;   // the write side asks the read side to take part in a reset
reg m_req_reg = 1'b1;   // and the other way round
reg s_ack_reg = 1'b0;   // the write side has seen the read side's request
reg m_ack_reg = 1'b0;
(* ASYNC_REG = "TRUE" *) reg s_req_sync1 = 1'b1;  // m_req_reg in s_clk
(* ASYNC_REG = "TRUE" *) reg s_req_sync2 = 1'b1;
(* ASYNC_REG = "TRUE" *) reg s_ack_sync1 = 1'b0;  // m_ack_reg in s_clk
(* ASYNC_REG = "TRUE" *) reg s_ack_sync2 = 1'b0;
(* ASYNC_REG = "TRUE" *) reg m_req_sync1 = 1'b1;  // s_req_reg in m_clk
(* ASYNC_REG = "TRUE" *) reg m_req_sync2 = 1'b1;
(* ASYNC_REG = "TRUE" *) reg m_ack_sync1 = 1'b0;  // s_ack_reg in m_clk
(* ASYNC_REG = "TRUE" *) reg m_ack_sync2 = 1'b0;

wire s_rst_all = s_rst || s_pend_reg || s_req_reg || s_req_sync2 || s_ack_reg;
wire m_rst_all = m_rst || m_pend_reg || m_req_reg || m_req_sync2 || m_ack_reg;
// The acknowledge counts only while this side's request is up: raised after the previous
// acknowledge fell, it is then the answer to this request.
wire s_clear = (s_req_reg && s_ack_sync2) || s_req_sync2;
wire m_clear = (m_req_reg && m_ack_sync2) || m_req_sync2;

assign s_rst_busy = s_rst_all;
assign m_rst_busy = m_rst_all;

always @(posedge s_clk) begin
    s_req_sync1 <= m_req_reg;
    s_req_sync2 <= s_req_sync1;
    s_ack_sync1 <= m_ack_reg;
    s_ack_sync2 <= s_ack_sync1;
    if (s_req_reg) begin
        if (!s_rst && s_ack_sync2) begin
            s_req_reg <= 1'b0;
            s_pend_reg <= 1'b0;
        end
    end else if ((s_rst || s_pend_reg) && (!s_ack_sync2 || BUG == 1)) begin
        s_req_reg <= 1'b1;
    end
    if (s_rst) begin
        s_pend_reg <= 1'b1;
    end
    s_ack_reg <= s_req_sync2;
end

always @(posedge m_clk) begin
    m_req_sync1 <= s_req_reg;
    m_req_sync2 <= m_req_sync1;
    m_ack_sync1 <= s_ack_reg;
    m_ack_sync2 <= m_ack_sync1;
    if (m_req_reg) begin
        if (!m_rst && m_ack_sync2) begin
            m_req_reg <= 1'b0;
            m_pend_reg <= 1'b0;
        end
    end else if ((m_rst || m_pend_reg) && (!m_ack_sync2 || BUG == 1)) begin
        m_req_reg <= 1'b1;
    end
    if (m_rst) begin
        m_pend_reg <= 1'b1;
    end
    m_ack_reg <= m_req_sync2;
end

/*
 * Write side
 */
reg [ADDR_WIDTH:0] wr_ptr_bin = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] wr_ptr_gray = {ADDR_WIDTH+1{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [ADDR_WIDTH:0] rd_ptr_gray_sync1 = {ADDR_WIDTH+1{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [ADDR_WIDTH:0] rd_ptr_gray_sync2 = {ADDR_WIDTH+1{1'b0}};
reg full_reg = 1'b1;

// Not ready in reset, so nothing is accepted that the reset would then lose.
wire s_ready_int = !full_reg && !s_rst_all;
wire s_fire = s_valid && s_ready_int;
// The pointer and full flag follow the write as if no reset were on: in reset the block below
// holds or clears them anyway, and the reset state stays out of the full flag's path.
wire s_take = s_valid && !full_reg;
wire [ADDR_WIDTH:0] wr_ptr_bin_next = wr_ptr_bin + {{ADDR_WIDTH{1'b0}}, s_take};
wire [ADDR_WIDTH:0] wr_ptr_gray_next = bin2gray(wr_ptr_bin_next);
// Full when the write pointer is one lap ahead: the two top Gray bits differ, the rest match.
wire full_next = wr_ptr_gray_next == {~rd_ptr_gray_sync2[ADDR_WIDTH:ADDR_WIDTH-1],
    rd_ptr_gray_sync2[ADDR_WIDTH-2:0]};

assign s_ready = s_ready_int;

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
        // The pointer moves only while the read side is idle and its synchronizer held.
        if (s_clear) begin
            wr_ptr_bin <= {ADDR_WIDTH+1{1'b0}};
            wr_ptr_gray <= {ADDR_WIDTH+1{1'b0}};
        end else begin
            wr_ptr_bin <= wr_ptr_bin;
            wr_ptr_gray <= wr_ptr_gray;
        end
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
// The pointer after the next read, binary and Gray, kept ready in registers: a read then only
// selects them, so the empty compare and the consumer's ready are not followed by an
// increment and a Gray encoding in the same cycle.
reg [ADDR_WIDTH:0] rd_ptr_bin_inc = {{ADDR_WIDTH{1'b0}}, 1'b1};
reg [ADDR_WIDTH:0] rd_ptr_gray_inc = {{ADDR_WIDTH{1'b0}}, 1'b1};
(* ASYNC_REG = "TRUE" *) reg [ADDR_WIDTH:0] wr_ptr_gray_sync1 = {ADDR_WIDTH+1{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [ADDR_WIDTH:0] wr_ptr_gray_sync2 = {ADDR_WIDTH+1{1'b0}};
reg [DATA_WIDTH-1:0] m_data_reg = {DATA_WIDTH{1'b0}};
reg m_valid_reg = 1'b0;

wire empty = rd_ptr_gray == wr_ptr_gray_sync2;
// Load the output register when it is free or being emptied this cycle.
wire load = !empty && !m_rst_all && (!m_valid_reg || m_ready);
wire [ADDR_WIDTH:0] rd_ptr_bin_inc_next = rd_ptr_bin_inc + {{ADDR_WIDTH{1'b0}}, 1'b1};

assign m_data = m_data_reg;
// Low from the first cycle of this side's reset, as AXI asks of a valid during reset.
assign m_valid = m_valid_reg && !m_rst;

always @(posedge m_clk) begin
    if (load) begin
        m_data_reg <= mem[rd_ptr_bin[ADDR_WIDTH-1:0]];
        m_valid_reg <= 1'b1;
    end else if (m_ready) begin
        m_valid_reg <= 1'b0;
    end
    if (load) begin
        rd_ptr_bin <= rd_ptr_bin_inc;
        rd_ptr_gray <= rd_ptr_gray_inc;
        rd_ptr_bin_inc <= rd_ptr_bin_inc_next;
        rd_ptr_gray_inc <= bin2gray(rd_ptr_bin_inc_next);
    end
    wr_ptr_gray_sync1 <= wr_ptr_gray;
    wr_ptr_gray_sync2 <= wr_ptr_gray_sync1;

    if (m_rst_all) begin
        // The pointer moves only while the write side is idle and its synchronizer held.
        if (m_clear) begin
            rd_ptr_bin <= {ADDR_WIDTH+1{1'b0}};
            rd_ptr_gray <= {ADDR_WIDTH+1{1'b0}};
            rd_ptr_bin_inc <= {{ADDR_WIDTH{1'b0}}, 1'b1};
            rd_ptr_gray_inc <= {{ADDR_WIDTH{1'b0}}, 1'b1};
        end else begin
            rd_ptr_bin <= rd_ptr_bin;
            rd_ptr_gray <= rd_ptr_gray;
            rd_ptr_bin_inc <= rd_ptr_bin_inc;
            rd_ptr_gray_inc <= rd_ptr_gray_inc;
        end
        wr_ptr_gray_sync1 <= {ADDR_WIDTH+1{1'b0}};
        wr_ptr_gray_sync2 <= {ADDR_WIDTH+1{1'b0}};
        // A reset of this side drops the output; one the write side asked for keeps an entry
        // already offered until it is taken, as AXI forbids withdrawing a valid.
        if (m_rst) begin
            m_valid_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
