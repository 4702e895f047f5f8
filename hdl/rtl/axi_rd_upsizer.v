/*
 * AXI4 read width up-converter (for example 128 -> 512 bits), one clock.
 *
 * Each slave burst becomes exactly one master burst of full-width beats covering the same
 * bytes (address aligned down to the master's beat, length = master beats touched). Several
 * bursts may be in flight: up to OUTSTANDING of them are remembered in a queue (ID, start
 * address, size, length) in the order they were issued. All master bursts carry the same ID
 * (zero), so the slave must return them in that order (AXI orders responses of one ID), and
 * the queue's head always describes the master beat that arrives. Each master beat is cut
 * into the slave beats that fall in it; slave beats leave with the ID of their burst, so
 * responses are in order per ID (in fact in issue order over all IDs).
 *
 * Handles any start address, INCR bursts of 1 to 256 beats and narrow transfers (the whole
 * slave-width slice that holds the address is returned; AXI puts the valid bytes on their
 * lanes); bursts must not cross 4 KiB.
 *
 * Refused bursts: one whose address lies at or above 2**M_ADDR_WIDTH gets DECERR on every
 * beat, a FIXED or WRAP one (or the reserved type) SLVERR. It takes its place in the queue
 * like any other but issues nothing to the master; when it reaches the head, its beats (zero
 * data, RLAST on the last) go out without a master beat, so the order is kept. addr_error or
 * burst_error pulses for each.
 *
 * Throughput: one slave beat per cycle. Every output to the slave is a register, and the
 * master's RREADY is high in the cycle a master beat's last slave beat is taken.
 *
 * Timing: the burst at the head of the queue is held in registers (its ID, size, response,
 * the position of its next slave beat, and whether that beat is its last and the last of its
 * master beat), loaded from the queue's memory when the burst before it leaves. RREADY is
 * then one gate over registers and the two handshakes, instead of a LUT-RAM read followed by
 * an address step and a compare: it drives the read pointer of the clock crossing's FIFO,
 * which has its own carry chain to fit in the same cycle. A burst reaches the head registers
 * one cycle after it enters the queue, which costs nothing while master data is on its way
 * (several cycles through the crossing) and delays only the first beat of a refused burst
 * behind an empty queue by that cycle.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_rd_upsizer #
(
    // Width of the slave data bus in bits
    parameter S_DATA_WIDTH = 128,
    // Width of the slave byte address in bits
    parameter S_ADDR_WIDTH = 64,
    // Width of the slave ID
    parameter S_ID_WIDTH = 4,
    // Width of the master data bus in bits (a power-of-two multiple of S_DATA_WIDTH)
    parameter M_DATA_WIDTH = 512,
    // Width of the master byte address in bits
    parameter M_ADDR_WIDTH = 31,
    // Width of the master ID (every burst uses ID zero)
    parameter M_ID_WIDTH = 5,
    // Bursts that may be in flight at once (a power of two)
    parameter OUTSTANDING = 8,
    // Deliberate fault for the host test suite's broken-card test (crates/card-tests), 0 in
    // every real build (no fault logic; fault_drop_beat_en is ignored). When 1 the fault
    // logic exists and fault_drop_beat_en turns it on at run time: a burst that starts in the
    // last slave slot of a master beat and goes on into the next one drops its second beat
    // (the first beat's data is sent again in its place). The burst keeps its length and
    // RLAST, so the protocol monitors cannot see it; only the data read back shows it.
    parameter FAULT_DROP_BEAT = 0
)
(
    input  wire                     clk,
    input  wire                     rst,

    /*
     * AXI4 read slave
     */
    input  wire [S_ID_WIDTH-1:0]    s_axi_arid,
    input  wire [S_ADDR_WIDTH-1:0]  s_axi_araddr,
    input  wire [7:0]               s_axi_arlen,
    input  wire [2:0]               s_axi_arsize,
    input  wire [1:0]               s_axi_arburst,
    input  wire                     s_axi_arlock,
    input  wire [3:0]               s_axi_arcache,
    input  wire [2:0]               s_axi_arprot,
    input  wire                     s_axi_arvalid,
    output wire                     s_axi_arready,
    output wire [S_ID_WIDTH-1:0]    s_axi_rid,
    output wire [S_DATA_WIDTH-1:0]  s_axi_rdata,
    output wire [1:0]               s_axi_rresp,
    output wire                     s_axi_rlast,
    output wire                     s_axi_rvalid,
    input  wire                     s_axi_rready,

    /*
     * AXI4 read master
     */
    output wire [M_ID_WIDTH-1:0]    m_axi_arid,
    output wire [M_ADDR_WIDTH-1:0]  m_axi_araddr,
    output wire [7:0]               m_axi_arlen,
    output wire [2:0]               m_axi_arsize,
    output wire [1:0]               m_axi_arburst,
    output wire                     m_axi_arlock,
    output wire [3:0]               m_axi_arcache,
    output wire [2:0]               m_axi_arprot,
    output wire                     m_axi_arvalid,
    input  wire                     m_axi_arready,
    input  wire [M_ID_WIDTH-1:0]    m_axi_rid,
    input  wire [M_DATA_WIDTH-1:0]  m_axi_rdata,
    input  wire [1:0]               m_axi_rresp,
    input  wire                     m_axi_rlast,
    input  wire                     m_axi_rvalid,
    output wire                     m_axi_rready,

    /*
     * Refused bursts (one-cycle pulses)
     */
    output wire                     addr_error,
    output wire                     burst_error,

    /*
     * Deliberate fault enable (FAULT_DROP_BEAT builds only; held constant from before reset)
     */
    input  wire                     fault_drop_beat_en
);

localparam S_BYTES = S_DATA_WIDTH/8;
localparam M_BYTES = M_DATA_WIDTH/8;
localparam S_SHIFT = $clog2(S_BYTES);
localparam M_SHIFT = $clog2(M_BYTES);
localparam SLOT_WIDTH = M_SHIFT - S_SHIFT;
// The last byte's offset from a burst's first master beat (a burst stays in its 4 KiB page).
localparam OFF_WIDTH = 13;
localparam QW = $clog2(OUTSTANDING);

localparam [1:0] BURST_INCR = 2'b01;

localparam [1:0]
    RESP_OKAY = 2'b00,
    RESP_SLVERR = 2'b10,
    RESP_DECERR = 2'b11;

// check configuration
initial begin
    if (2**S_SHIFT != S_BYTES || 2**M_SHIFT != M_BYTES || M_BYTES <= S_BYTES || S_BYTES * 8 != S_DATA_WIDTH) begin
        $error("Error: data widths must be powers of two with M_DATA_WIDTH > S_DATA_WIDTH (instance %m)");
        $finish;
    end

    if (M_BYTES > 4096 || S_ADDR_WIDTH <= M_ADDR_WIDTH || M_ADDR_WIDTH <= M_SHIFT) begin
        $error("Error: address widths must satisfy M_SHIFT < M_ADDR_WIDTH < S_ADDR_WIDTH (instance %m)");
        $finish;
    end

    if (QW < 1 || 2**QW != OUTSTANDING) begin
        $error("Error: OUTSTANDING must be a power of two, at least 2 (instance %m)");
        $finish;
    end

    if (FAULT_DROP_BEAT != 0 && FAULT_DROP_BEAT != 1) begin
        $error("Error: FAULT_DROP_BEAT must be 0 or 1 (instance %m)");
        $finish;
    end
end

/*
 * Bursts in flight that have not reached the head yet, oldest first. The pointers carry one
 * bit more than the address to tell a full queue from an empty one.
 */
reg [S_ID_WIDTH-1:0] q_id[OUTSTANDING-1:0];
reg [M_SHIFT-1:0]    q_off[OUTSTANDING-1:0];
reg [2:0]            q_size[OUTSTANDING-1:0];
reg [7:0]            q_len[OUTSTANDING-1:0];
reg [1:0]            q_err[OUTSTANDING-1:0];   // OKAY, or the refused burst's response
reg                  q_last[OUTSTANDING-1:0];  // the first beat is the burst's last
reg                  q_line_end[OUTSTANDING-1:0];  // the first beat ends its master beat
reg [QW:0] q_wr_reg = {QW+1{1'b0}};
reg [QW:0] q_rd_reg = {QW+1{1'b0}};
// Bursts in flight, the head included.
reg [QW:0] count_reg = {QW+1{1'b0}};

/*
 * The head burst: the one whose beats go out now.
 */
reg                    h_valid_reg = 1'b0;
reg [S_ID_WIDTH-1:0]   h_id_reg = {S_ID_WIDTH{1'b0}};
reg [2:0]              h_size_reg = 3'd0;
reg [1:0]              h_err_reg = 2'b00;
reg [M_SHIFT-1:0]      h_off_reg = {M_SHIFT{1'b0}};   // the next slave beat's offset in its line
reg [7:0]              h_left_reg = 8'd0;             // beats after the next one
reg                    h_last_reg = 1'b0;             // the next beat is the burst's last
// The head's next beat is the last of its master beat (or of its burst) and the burst is
// served: RREADY goes with that beat.
reg                    h_rready_reg = 1'b0;

reg [M_ADDR_WIDTH-1:0] m_axi_araddr_reg = {M_ADDR_WIDTH{1'b0}};
reg [7:0]              m_axi_arlen_reg = 8'd0;
reg                    m_axi_arlock_reg = 1'b0;
reg [3:0]              m_axi_arcache_reg = 4'd0;
reg [2:0]              m_axi_arprot_reg = 3'd0;
reg                    m_axi_arvalid_reg = 1'b0;

// FAULT_DROP_BEAT only: the head burst has sent no beat yet, and the next slave beat is the
// one the fault drops (never while fault_drop_beat_en is low).
reg                    h_first_reg = 1'b0;
reg                    fault_drop_reg = 1'b0;

reg [S_ID_WIDTH-1:0]   s_axi_rid_reg = {S_ID_WIDTH{1'b0}};
reg [S_DATA_WIDTH-1:0] s_axi_rdata_reg = {S_DATA_WIDTH{1'b0}};
reg [1:0]              s_axi_rresp_reg = 2'b00;
reg                    s_axi_rlast_reg = 1'b0;
reg                    s_axi_rvalid_reg = 1'b0;
reg addr_error_reg = 1'b0;
reg burst_error_reg = 1'b0;

assign s_axi_arready = !m_axi_arvalid_reg && count_reg != OUTSTANDING[QW:0];
assign s_axi_rid = s_axi_rid_reg;
assign s_axi_rdata = s_axi_rdata_reg;
assign s_axi_rresp = s_axi_rresp_reg;
assign s_axi_rlast = s_axi_rlast_reg;
assign s_axi_rvalid = s_axi_rvalid_reg;

assign m_axi_arid = {M_ID_WIDTH{1'b0}};
assign m_axi_araddr = m_axi_araddr_reg;
assign m_axi_arlen = m_axi_arlen_reg;
assign m_axi_arsize = M_SHIFT[2:0];
assign m_axi_arburst = BURST_INCR;
assign m_axi_arlock = m_axi_arlock_reg;
assign m_axi_arcache = m_axi_arcache_reg;
assign m_axi_arprot = m_axi_arprot_reg;
assign m_axi_arvalid = m_axi_arvalid_reg;
assign addr_error = addr_error_reg;
assign burst_error = burst_error_reg;

// A beat of `size` at offset `off` is the last of its line when every offset bit from the
// size up to the line's is one (the next aligned beat starts the next line), and the second
// to last when those bits are ones over a zero at the size's own bit.
function line_last(input [M_SHIFT-1:0] off, input [2:0] size);
    line_last = &(off | ~({M_SHIFT{1'b1}} << size));
endfunction

function line_second_last(input [M_SHIFT-1:0] off, input [2:0] size);
    reg [M_SHIFT-1:0] step;
    begin
        step = {{M_SHIFT-1{1'b0}}, 1'b1} << size;
        line_second_last = &(off | ~({M_SHIFT{1'b1}} << size) | step) && (off & step) == 0;
    end
endfunction

/*
 * Address phase
 */
wire [2:0] ar_size = s_axi_arsize > S_SHIFT[2:0] ? S_SHIFT[2:0] : s_axi_arsize;
// The start's offset within its master beat.
wire [M_SHIFT-1:0] ar_off = s_axi_araddr[M_SHIFT-1:0];
// The master beats after the first: the last byte's offset from the first master beat's start
// (the size-aligned start within it, with its bits below the size set, plus ARLEN * 2**size),
// over the master's width. One adder, as in axi_wr_upsizer.
wire [OFF_WIDTH-1:0] ar_end = {{OFF_WIDTH-M_SHIFT{1'b0}},
    ar_off | ~({M_SHIFT{1'b1}} << ar_size)}
    + ({{OFF_WIDTH-8{1'b0}}, s_axi_arlen} << ar_size);
wire [OFF_WIDTH-1:0] ar_lines = ar_end >> M_SHIFT;
wire ar_fire = s_axi_arvalid && s_axi_arready;
wire ar_out_of_range = s_axi_araddr[S_ADDR_WIDTH-1:M_ADDR_WIDTH] != 0;
wire ar_not_incr = s_axi_arburst != BURST_INCR;
wire [1:0] ar_err = ar_out_of_range ? RESP_DECERR : (ar_not_incr ? RESP_SLVERR : RESP_OKAY);
wire ar_last = s_axi_arlen == 8'd0;

/*
 * Data phase: the head burst's next slave beat, all from registers.
 */
wire [QW-1:0] q_rd_addr = q_rd_reg[QW-1:0];
wire q_waiting = q_wr_reg != q_rd_reg;
wire h_refused = h_err_reg != RESP_OKAY;
wire [M_SHIFT-1:0] h_step = {{M_SHIFT-1{1'b0}}, 1'b1} << h_size_reg;
// The offset of the beat after the next one, within its line (the line's carry is dropped:
// only the slot and the position in the line matter here).
wire [M_SHIFT-1:0] h_off_next = (h_off_reg & ({M_SHIFT{1'b1}} << h_size_reg)) + h_step;
wire [SLOT_WIDTH-1:0] h_slot = h_off_reg[M_SHIFT-1:S_SHIFT];
wire r_load = h_valid_reg && (m_axi_rvalid || h_refused) && (!s_axi_rvalid_reg || s_axi_rready);
wire h_pop = r_load && h_last_reg;
// The next queued burst moves into the head when the head is free or leaves in this cycle.
wire h_load = q_waiting && (!h_valid_reg || h_pop);

// RREADY is one gate: h_rready_reg already holds the head's valid, line end and refusal.
assign m_axi_rready = h_rready_reg && m_axi_rvalid && (!s_axi_rvalid_reg || s_axi_rready);

// The master's ID and RLAST carry nothing the queue does not already know; a build without
// the fault logic ignores its enable.
wire unused = &{1'b0, m_axi_rid, m_axi_rlast, ar_lines[OFF_WIDTH-1:8], fault_drop_beat_en,
    1'b0};

always @(posedge clk) begin
    addr_error_reg <= 1'b0;
    burst_error_reg <= 1'b0;

    if (m_axi_arvalid_reg && m_axi_arready) begin
        m_axi_arvalid_reg <= 1'b0;
    end

    if (ar_fire) begin
        m_axi_araddr_reg <= {s_axi_araddr[M_ADDR_WIDTH-1:M_SHIFT], {M_SHIFT{1'b0}}};
        m_axi_arlen_reg <= ar_lines[7:0];
        m_axi_arlock_reg <= s_axi_arlock;
        m_axi_arcache_reg <= s_axi_arcache;
        m_axi_arprot_reg <= s_axi_arprot;
        // A refused burst issues nothing.
        m_axi_arvalid_reg <= ar_err == RESP_OKAY;
        addr_error_reg <= ar_out_of_range;
        burst_error_reg <= !ar_out_of_range && ar_not_incr;
        q_err[q_wr_reg[QW-1:0]] <= ar_err;
        q_id[q_wr_reg[QW-1:0]] <= s_axi_arid;
        q_off[q_wr_reg[QW-1:0]] <= ar_off;
        q_size[q_wr_reg[QW-1:0]] <= ar_size;
        q_len[q_wr_reg[QW-1:0]] <= s_axi_arlen;
        q_last[q_wr_reg[QW-1:0]] <= ar_last;
        q_line_end[q_wr_reg[QW-1:0]] <= ar_last || line_last(ar_off, ar_size);
        q_wr_reg <= q_wr_reg + 1'b1;
    end

    if (s_axi_rvalid_reg && s_axi_rready) begin
        s_axi_rvalid_reg <= 1'b0;
    end

    if (r_load) begin
        s_axi_rid_reg <= h_id_reg;
        if (!fault_drop_reg) begin
            s_axi_rdata_reg <= h_refused ? {S_DATA_WIDTH{1'b0}}
                : m_axi_rdata[h_slot*S_DATA_WIDTH +: S_DATA_WIDTH];
        end
        fault_drop_reg <= FAULT_DROP_BEAT != 0 && fault_drop_beat_en && h_first_reg
            && !h_last_reg && h_slot == {SLOT_WIDTH{1'b1}};
        h_first_reg <= 1'b0;
        s_axi_rresp_reg <= h_refused ? h_err_reg : m_axi_rresp;
        s_axi_rlast_reg <= h_last_reg;
        s_axi_rvalid_reg <= 1'b1;
        // The head's next beat; a burst that leaves is replaced below.
        h_off_reg <= h_off_next;
        h_left_reg <= h_left_reg - 8'd1;
        h_last_reg <= h_left_reg == 8'd1;
        h_rready_reg <= !h_last_reg && !h_refused
            && (h_left_reg == 8'd1 || line_second_last(h_off_reg, h_size_reg));
        if (h_last_reg) begin
            h_valid_reg <= 1'b0;
        end
    end

    if (h_load) begin
        h_valid_reg <= 1'b1;
        h_first_reg <= 1'b1;
        h_id_reg <= q_id[q_rd_addr];
        h_size_reg <= q_size[q_rd_addr];
        h_err_reg <= q_err[q_rd_addr];
        h_off_reg <= q_off[q_rd_addr];
        h_left_reg <= q_len[q_rd_addr];
        h_last_reg <= q_last[q_rd_addr];
        h_rready_reg <= q_line_end[q_rd_addr] && q_err[q_rd_addr] == RESP_OKAY;
        q_rd_reg <= q_rd_reg + 1'b1;
    end

    count_reg <= count_reg + {{QW{1'b0}}, ar_fire} - {{QW{1'b0}}, h_pop};

    if (rst) begin
        m_axi_arvalid_reg <= 1'b0;
        q_wr_reg <= {QW+1{1'b0}};
        q_rd_reg <= {QW+1{1'b0}};
        count_reg <= {QW+1{1'b0}};
        h_valid_reg <= 1'b0;
        h_rready_reg <= 1'b0;
        s_axi_rvalid_reg <= 1'b0;
        addr_error_reg <= 1'b0;
        burst_error_reg <= 1'b0;
        h_first_reg <= 1'b0;
        fault_drop_reg <= 1'b0;
    end
end

endmodule

`resetall
