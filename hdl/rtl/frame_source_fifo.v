/*
 * Synchronous FIFO with a registered output stage, for the frame source.
 *
 * One write and one read per cycle at full rate. The storage is a simple dual-port memory
 * read through a register (block RAM on Xilinx parts); the output register holds its word
 * while m_ready is low, so the word on m_data never changes under a stall. `count` is the
 * number of words in the memory, not counting the output register: the frame source uses it
 * to reserve room for a whole frame.
 *
 * Dropping: while `drop` is high, the memory's words are taken out one per cycle without
 * reaching the output register, as long as that register is empty or holds the last word of a
 * frame (bit LAST_BIT set); while it holds any other word, the rest of that frame still goes
 * out. The frame source drops unsent frames this way without ever withdrawing a word it has
 * presented or cutting a frame behind it. The held word's last bit is looked at here, after
 * the memory's read register, so that only one level of logic follows the memory.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_source_fifo #
(
    // Width of a word in bits
    parameter WIDTH = 145,
    // Words of storage (a power of two)
    parameter DEPTH = 4096,
    // Width of the count output
    parameter COUNT_WIDTH = $clog2(DEPTH)+1,
    // The bit of a word that marks the last word of a frame
    parameter LAST_BIT = WIDTH-1,
    // A seeded bug for the formal proofs' own test, never set by the card (0: none): 1 loses
    // the word written at the second edge after a reset (the first at which a writer may
    // offer one), although s_ready took it.
    parameter BUG = 0
)
(
    input  wire                    clk,
    input  wire                    rst,

    /*
     * Write side
     */
    input  wire [WIDTH-1:0]        s_data,
    input  wire                    s_valid,
    output wire                    s_ready,

    /*
     * Read side
     */
    output wire [WIDTH-1:0]        m_data,
    output wire                    m_valid,
    input  wire                    m_ready,
    input  wire                    drop,

    /*
     * Status
     */
    output wire [COUNT_WIDTH-1:0]  count
);

localparam ADDR_WIDTH = $clog2(DEPTH);

// check configuration
initial begin
    if (DEPTH < 2 || (1 << ADDR_WIDTH) != DEPTH) begin
        $error("Error: DEPTH must be a power of two of at least 2 (instance %m)");
        $finish;
    end
    if (LAST_BIT < 0 || LAST_BIT >= WIDTH) begin
        $error("Error: LAST_BIT must be a bit of the word (instance %m)");
        $finish;
    end
    if (COUNT_WIDTH != ADDR_WIDTH+1) begin
        $error("Error: COUNT_WIDTH must be $clog2(DEPTH)+1 (instance %m)");
        $finish;
    end
    if (BUG < 0 || BUG > 1) begin
        $error("Error: BUG must be 0 or 1 (instance %m)");
        $finish;
    end
end

reg [WIDTH-1:0] mem[(2**ADDR_WIDTH)-1:0];

reg [ADDR_WIDTH:0] wr_ptr_reg = {ADDR_WIDTH+1{1'b0}};
reg [ADDR_WIDTH:0] rd_ptr_reg = {ADDR_WIDTH+1{1'b0}};
reg [WIDTH-1:0] m_data_reg = {WIDTH{1'b0}};
reg m_valid_reg = 1'b0;

// The fill level and the full and empty flags are registers, each updated from this cycle's
// write and read, so that s_ready comes straight from a flip-flop (the frame source steers its
// whole pipeline by it) and no pointer subtraction sits in front of it.
reg [ADDR_WIDTH:0] fill_reg = {ADDR_WIDTH+1{1'b0}};
reg full_reg = 1'b0;
reg empty_reg = 1'b1;

// Reset at the last two edges, the last in bit 0 (BUG 1 only).
reg [1:0] rst_hist_reg = 2'b00;

wire write = s_valid && !full_reg && !(BUG == 1 && rst_hist_reg == 2'b10 && !rst);
// A held word with its last bit set lets the memory's words go; an empty output register
// takes none while dropping.
wire held_last = m_data_reg[LAST_BIT];
wire read = !empty_reg && (!m_valid_reg || m_ready || (drop && held_last));
wire load = read && !(drop && (!m_valid_reg || held_last));
wire at_top = fill_reg == DEPTH[ADDR_WIDTH:0] - 1'b1;
wire at_one = fill_reg == {{ADDR_WIDTH{1'b0}}, 1'b1};

assign s_ready = !full_reg;
assign m_data = m_data_reg;
assign m_valid = m_valid_reg;
assign count = fill_reg;

always @(posedge clk) begin
    if (write) begin
        mem[wr_ptr_reg[ADDR_WIDTH-1:0]] <= s_data;
    end
    if (write) begin
        wr_ptr_reg <= wr_ptr_reg + 1'b1;
    end
    if (read) begin
        rd_ptr_reg <= rd_ptr_reg + 1'b1;
    end
    rst_hist_reg <= {rst_hist_reg[0], rst};
    if (write && !read) begin
        fill_reg <= fill_reg + 1'b1;
        full_reg <= at_top;
        empty_reg <= 1'b0;
    end else if (read && !write) begin
        fill_reg <= fill_reg - 1'b1;
        full_reg <= 1'b0;
        empty_reg <= at_one;
    end

    if (load) begin
        m_data_reg <= mem[rd_ptr_reg[ADDR_WIDTH-1:0]];
        m_valid_reg <= 1'b1;
    end else if (m_ready) begin
        m_valid_reg <= 1'b0;
    end

    if (rst) begin
        wr_ptr_reg <= {ADDR_WIDTH+1{1'b0}};
        rd_ptr_reg <= {ADDR_WIDTH+1{1'b0}};
        fill_reg <= {ADDR_WIDTH+1{1'b0}};
        full_reg <= 1'b0;
        empty_reg <= 1'b1;
        m_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
