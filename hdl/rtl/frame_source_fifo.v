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
    parameter BUG = 0,
    // A seeded synthesis/simulation mismatch for the netlist run's own test, never set by the
    // card (0: none). Each codes one piece of the FIFO so that simulation runs it as the card's
    // FIFO and synthesis builds something else: 1 the fill update's case marked full_case
    // though it lists only a write or a read alone; 2 its flags left `x` for a write and a read
    // together, taken for a don't-care; 3 the read decision in a block whose sensitivity list
    // lacks drop and the held word's last bit; 4 a word written into an empty FIFO read out in
    // the same cycle, relying on the memory written by a blocking assignment in a block of its
    // own, which simulation runs before the read (new data), where the block RAM reads first.
    parameter MISMATCH = 0
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
    if (MISMATCH < 0 || MISMATCH > 4) begin
        $error("Error: MISMATCH must be 0 to 4 (instance %m)");
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

// The seeded mismatches' versions of the fill update, the read decision and the output word
// (MISMATCH 1 and 2, 3, 4); constants where they are not seeded.
wire [ADDR_WIDTH:0] seeded_fill;
wire seeded_full;
wire seeded_empty;
wire seeded_read;
wire [WIDTH-1:0] seeded_word;

wire write = s_valid && !full_reg && !(BUG == 1 && rst_hist_reg == 2'b10 && !rst);
// A held word with its last bit set lets the memory's words go; an empty output register
// takes none while dropping.
wire [WIDTH-1:0] held_word = MISMATCH == 4 ? seeded_word : m_data_reg;
wire held_last = held_word[LAST_BIT];
// MISMATCH 4 reads the word being written into an empty FIFO in the same cycle.
wire through = MISMATCH == 4 && empty_reg && write;
wire read = MISMATCH == 3 ? seeded_read
    : (!empty_reg || through) && (!m_valid_reg || m_ready || (drop && held_last));
wire load = read && !(drop && (!m_valid_reg || held_last));
wire at_top = fill_reg == DEPTH[ADDR_WIDTH:0] - 1'b1;
wire at_one = fill_reg == {{ADDR_WIDTH{1'b0}}, 1'b1};

assign s_ready = !full_reg;
assign m_data = held_word;
assign m_valid = m_valid_reg;
assign count = fill_reg;

generate
if (MISMATCH == 1 || MISMATCH == 2) begin : g_fill_case
    reg [ADDR_WIDTH:0] fill_next;
    reg full_next;
    reg empty_next;
    if (MISMATCH == 1) begin : g_full_case
        // Not full: a write and a read together, or neither, are not listed, and the
        // defaults above the case hold the fill there in simulation only. The attribute,
        // not the `synopsys full_case` comment, which Verilator checks as an assertion.
        always @* begin
            fill_next = fill_reg;
            full_next = full_reg;
            empty_next = empty_reg;
            // The incomplete case is the seeded mismatch.
            /* verilator lint_off CASEINCOMPLETE */
            (* full_case *)
            case ({write, read})
                2'b10: begin
                    fill_next = fill_reg + 1'b1;
                    full_next = at_top;
                    empty_next = 1'b0;
                end
                2'b01: begin
                    fill_next = fill_reg - 1'b1;
                    full_next = 1'b0;
                    empty_next = at_one;
                end
            endcase
            /* verilator lint_on CASEINCOMPLETE */
        end
    end else begin : g_x_default
        // Both flags are low whenever a write and a read come together (a write needs room,
        // a read a word), which simulation's x (zero here) happens to give; synthesis takes
        // the x as leave to choose.
        always @* begin
            fill_next = fill_reg;
            case ({write, read})
                2'b10: begin
                    fill_next = fill_reg + 1'b1;
                    full_next = at_top;
                    empty_next = 1'b0;
                end
                2'b01: begin
                    fill_next = fill_reg - 1'b1;
                    full_next = 1'b0;
                    empty_next = at_one;
                end
                2'b00: begin
                    full_next = full_reg;
                    empty_next = empty_reg;
                end
                default: begin
                    full_next = 1'bx;
                    empty_next = 1'bx;
                end
            endcase
        end
    end
    assign seeded_fill = fill_next;
    assign seeded_full = full_next;
    assign seeded_empty = empty_next;
end else begin : g_fill
    assign seeded_fill = {ADDR_WIDTH+1{1'b0}};
    assign seeded_full = 1'b0;
    assign seeded_empty = 1'b0;
end

if (MISMATCH == 3) begin : g_sensitivity
    reg read_now;
    // drop and held_last are missing from the list: simulation keeps the last value while
    // only they change, synthesis builds the expression.
    // The incomplete list is the seeded mismatch; Verilator reads a list without edges as
    // an asynchronous one, hence its warning.
    /* verilator lint_off SYNCASYNCNET */
    always @(empty_reg or m_valid_reg or m_ready) begin
        read_now = !empty_reg && (!m_valid_reg || m_ready || (drop && held_last));
    end
    /* verilator lint_on SYNCASYNCNET */
    assign seeded_read = read_now;
end else begin : g_read
    assign seeded_read = 1'b0;
end

if (MISMATCH == 4) begin : g_write_first
    reg [WIDTH-1:0] mem_first[(2**ADDR_WIDTH)-1:0];
    reg [WIDTH-1:0] word_reg = {WIDTH{1'b0}};
    // Blocking, in a block of its own: simulation orders it before the read below.
    // The blocking assignment is the seeded mismatch.
    /* verilator lint_off BLKSEQ */
    always @(posedge clk) begin
        if (write) begin
            mem_first[wr_ptr_reg[ADDR_WIDTH-1:0]] = s_data;
        end
    end
    /* verilator lint_on BLKSEQ */
    always @(posedge clk) begin
        if (load) begin
            word_reg <= mem_first[rd_ptr_reg[ADDR_WIDTH-1:0]];
        end
    end
    assign seeded_word = word_reg;
end else begin : g_word
    assign seeded_word = {WIDTH{1'b0}};
end
endgenerate

always @(posedge clk) begin
    if (write && MISMATCH != 4) begin
        mem[wr_ptr_reg[ADDR_WIDTH-1:0]] <= s_data;
    end
    if (write) begin
        wr_ptr_reg <= wr_ptr_reg + 1'b1;
    end
    if (read) begin
        rd_ptr_reg <= rd_ptr_reg + 1'b1;
    end
    rst_hist_reg <= {rst_hist_reg[0], rst};
    if (MISMATCH == 1 || MISMATCH == 2) begin
        fill_reg <= seeded_fill;
        full_reg <= seeded_full;
        empty_reg <= seeded_empty;
    end else if (write && !read) begin
        fill_reg <= fill_reg + 1'b1;
        full_reg <= at_top;
        empty_reg <= 1'b0;
    end else if (read && !write) begin
        fill_reg <= fill_reg - 1'b1;
        full_reg <= 1'b0;
        empty_reg <= at_one;
    end

    if (load && MISMATCH != 4) begin
        m_data_reg <= mem[rd_ptr_reg[ADDR_WIDTH-1:0]];
    end
    if (load) begin
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
