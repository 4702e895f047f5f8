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
 * lanes). FIXED and WRAP bursts are treated as INCR; bursts must not cross 4 KiB.
 *
 * Throughput: one slave beat per cycle. Every output to the slave is a register, and the
 * master's RREADY is high in the cycle a master beat's last slave beat is taken.
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
    // every real build: when 1, a burst that starts in the last slave slot of a master beat
    // and goes on into the next one drops its second beat (the first beat's data is sent
    // again in its place). The burst keeps its length and RLAST, so the protocol monitors
    // cannot see it; only the data read back shows it.
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
    output wire                     m_axi_rready
);

localparam S_BYTES = S_DATA_WIDTH/8;
localparam M_BYTES = M_DATA_WIDTH/8;
localparam S_SHIFT = $clog2(S_BYTES);
localparam M_SHIFT = $clog2(M_BYTES);
localparam SLOT_WIDTH = M_SHIFT - S_SHIFT;
// Byte offset within a 4 KiB page, with a carry bit for the end of a burst.
localparam OFF_WIDTH = 13;
localparam QW = $clog2(OUTSTANDING);

localparam [1:0] BURST_INCR = 2'b01;

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
 * Bursts in flight, oldest first
 */
reg [S_ID_WIDTH-1:0] q_id[OUTSTANDING-1:0];
reg [OFF_WIDTH-1:0]  q_off[OUTSTANDING-1:0];
reg [2:0]            q_size[OUTSTANDING-1:0];
reg [7:0]            q_len[OUTSTANDING-1:0];
reg [QW-1:0] q_wr_reg = {QW{1'b0}};
reg [QW-1:0] q_rd_reg = {QW{1'b0}};
reg [QW:0]   q_count_reg = {QW+1{1'b0}};

reg [M_ADDR_WIDTH-1:0] m_axi_araddr_reg = {M_ADDR_WIDTH{1'b0}};
reg [7:0]              m_axi_arlen_reg = 8'd0;
reg                    m_axi_arlock_reg = 1'b0;
reg [3:0]              m_axi_arcache_reg = 4'd0;
reg [2:0]              m_axi_arprot_reg = 3'd0;
reg                    m_axi_arvalid_reg = 1'b0;

// Progress through the head burst once its first beat has gone.
reg                 r_started_reg = 1'b0;
reg [OFF_WIDTH-1:0] r_off_reg = {OFF_WIDTH{1'b0}};
reg [7:0]           r_left_reg = 8'd0;
// FAULT_DROP_BEAT only: the next slave beat is the one the fault drops.
reg                 fault_drop_reg = 1'b0;

reg [S_ID_WIDTH-1:0]   s_axi_rid_reg = {S_ID_WIDTH{1'b0}};
reg [S_DATA_WIDTH-1:0] s_axi_rdata_reg = {S_DATA_WIDTH{1'b0}};
reg [1:0]              s_axi_rresp_reg = 2'b00;
reg                    s_axi_rlast_reg = 1'b0;
reg                    s_axi_rvalid_reg = 1'b0;

assign s_axi_arready = !m_axi_arvalid_reg && q_count_reg != OUTSTANDING[QW:0];
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


/*
 * Address phase
 */
wire [2:0] ar_size = s_axi_arsize > S_SHIFT[2:0] ? S_SHIFT[2:0] : s_axi_arsize;
wire [OFF_WIDTH-1:0] ar_off = {1'b0, s_axi_araddr[11:0]};
wire [OFF_WIDTH-1:0] ar_size_mask = {OFF_WIDTH{1'b1}} << ar_size;
wire [OFF_WIDTH-1:0] ar_beats = {{OFF_WIDTH-9{1'b0}}, {1'b0, s_axi_arlen} + 9'd1};
wire [OFF_WIDTH-1:0] ar_last_byte = (ar_off & ar_size_mask) + (ar_beats << ar_size) - 1'b1;
wire [OFF_WIDTH-1:0] ar_lines = (ar_last_byte >> M_SHIFT) - (ar_off >> M_SHIFT);
wire ar_fire = s_axi_arvalid && s_axi_arready;

/*
 * Data phase: the next slave beat of the head burst
 */
wire [OFF_WIDTH-1:0] cur_off = r_started_reg ? r_off_reg : q_off[q_rd_reg];
wire [7:0] cur_left = r_started_reg ? r_left_reg : q_len[q_rd_reg];
wire [2:0] cur_size = q_size[q_rd_reg];
wire [OFF_WIDTH-1:0] cur_size_mask = {OFF_WIDTH{1'b1}} << cur_size;
wire [OFF_WIDTH-1:0] cur_step = {{OFF_WIDTH-1{1'b0}}, 1'b1} << cur_size;
wire [OFF_WIDTH-1:0] cur_next = (cur_off & cur_size_mask) + cur_step;
wire cur_last = cur_left == 8'd0;
wire cur_line_end = cur_last || cur_next[OFF_WIDTH-1:M_SHIFT] != cur_off[OFF_WIDTH-1:M_SHIFT];
wire [SLOT_WIDTH-1:0] cur_slot = cur_off[M_SHIFT-1:S_SHIFT];
wire r_load = q_count_reg != 0 && m_axi_rvalid && (!s_axi_rvalid_reg || s_axi_rready);

assign m_axi_rready = r_load && cur_line_end;

// The master's ID and RLAST carry nothing the queue does not already know.
wire unused = &{1'b0, s_axi_arburst, m_axi_rid, m_axi_rlast,
    s_axi_araddr[S_ADDR_WIDTH-1:M_ADDR_WIDTH], ar_lines[OFF_WIDTH-1:8], 1'b0};

always @(posedge clk) begin
    if (m_axi_arvalid_reg && m_axi_arready) begin
        m_axi_arvalid_reg <= 1'b0;
    end

    if (ar_fire) begin
        m_axi_araddr_reg <= {s_axi_araddr[M_ADDR_WIDTH-1:M_SHIFT], {M_SHIFT{1'b0}}};
        m_axi_arlen_reg <= ar_lines[7:0];
        m_axi_arlock_reg <= s_axi_arlock;
        m_axi_arcache_reg <= s_axi_arcache;
        m_axi_arprot_reg <= s_axi_arprot;
        m_axi_arvalid_reg <= 1'b1;
        q_id[q_wr_reg] <= s_axi_arid;
        q_off[q_wr_reg] <= ar_off;
        q_size[q_wr_reg] <= ar_size;
        q_len[q_wr_reg] <= s_axi_arlen;
        q_wr_reg <= q_wr_reg + 1'b1;
    end

    if (s_axi_rvalid_reg && s_axi_rready) begin
        s_axi_rvalid_reg <= 1'b0;
    end

    if (r_load) begin
        s_axi_rid_reg <= q_id[q_rd_reg];
        if (!fault_drop_reg) begin
            s_axi_rdata_reg <= m_axi_rdata[cur_slot*S_DATA_WIDTH +: S_DATA_WIDTH];
        end
        fault_drop_reg <= FAULT_DROP_BEAT != 0 && !r_started_reg && !cur_last
            && cur_slot == {SLOT_WIDTH{1'b1}};
        s_axi_rresp_reg <= m_axi_rresp;
        s_axi_rlast_reg <= cur_last;
        s_axi_rvalid_reg <= 1'b1;
        if (cur_last) begin
            r_started_reg <= 1'b0;
            q_rd_reg <= q_rd_reg + 1'b1;
        end else begin
            r_started_reg <= 1'b1;
            r_off_reg <= cur_next;
            r_left_reg <= cur_left - 8'd1;
        end
    end

    q_count_reg <= q_count_reg + {{QW{1'b0}}, ar_fire} - {{QW{1'b0}}, r_load && cur_last};

    if (rst) begin
        m_axi_arvalid_reg <= 1'b0;
        q_wr_reg <= {QW{1'b0}};
        q_rd_reg <= {QW{1'b0}};
        q_count_reg <= {QW+1{1'b0}};
        r_started_reg <= 1'b0;
        s_axi_rvalid_reg <= 1'b0;
        fault_drop_reg <= 1'b0;
    end
end

endmodule

`resetall
