/*
 * AXI4 write width up-converter (for example 128 -> 512 bits), one clock.
 *
 * Each slave burst becomes exactly one master burst of full-width beats covering the same
 * bytes: the address is aligned down to the master's beat, the length counts the master beats
 * that the burst's bytes touch. Slave beats are gathered into a master beat until the next
 * slave beat falls in another master beat (or the burst ends); then the gathered beat, with a
 * strobe bit for each byte the slave wrote, goes out. Bytes the slave did not strobe keep
 * their strobe low, so partial and narrow writes change only their own bytes.
 *
 * Handles any start address, INCR bursts of 1 to 256 beats, narrow transfers (AWSIZE below the
 * slave width, the bytes taken from the lanes AXI assigns them) and any write strobe pattern.
 * Bursts must not cross a 4 KiB boundary, as AXI requires.
 *
 * Refused bursts: one whose address lies at or above 2**M_ADDR_WIDTH (outside the memory
 * behind the master) gets DECERR, a FIXED or WRAP one (or the reserved burst type) SLVERR.
 * Its data beats are taken and dropped, nothing reaches the master, and its response is
 * given once every burst before it has had its own, so responses keep AXI's order per ID.
 * addr_error or burst_error pulses for each.
 *
 * One burst at a time: the address is registered and passed on, then the data beats are
 * accepted at one per cycle; a beat that completes a master beat waits while the one before
 * is still in the output register, which costs nothing on bursts of full-width beats (a
 * master beat every M_DATA_WIDTH / S_DATA_WIDTH slave beats). Write responses pass through
 * unchanged (one per burst). Every output but the response pass-through is a register.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_wr_upsizer #
(
    // Width of the slave data bus in bits
    parameter S_DATA_WIDTH = 128,
    // Width of the slave byte address in bits
    parameter S_ADDR_WIDTH = 64,
    // Width of the master data bus in bits (a power-of-two multiple of S_DATA_WIDTH)
    parameter M_DATA_WIDTH = 512,
    // Width of the master byte address in bits
    parameter M_ADDR_WIDTH = 31,
    // Width of the ID on both sides
    parameter ID_WIDTH = 5,
    // Width of the slave write strobe
    parameter S_STRB_WIDTH = (S_DATA_WIDTH/8),
    // Width of the master write strobe
    parameter M_STRB_WIDTH = (M_DATA_WIDTH/8),
    // Seeded bug for the converter's formal proof (hdl/formal), never set by the card: 1 takes
    // every byte of a narrow beat from slave lane 0 instead of its own lane; 2 drops the byte
    // of a narrow beat's top slave lane (its strobe is not passed on)
    parameter BUG = 0
)
(
    input  wire                     clk,
    input  wire                     rst,

    /*
     * AXI4 write slave
     */
    input  wire [ID_WIDTH-1:0]      s_axi_awid,
    input  wire [S_ADDR_WIDTH-1:0]  s_axi_awaddr,
    input  wire [7:0]               s_axi_awlen,
    input  wire [2:0]               s_axi_awsize,
    input  wire [1:0]               s_axi_awburst,
    input  wire                     s_axi_awlock,
    input  wire [3:0]               s_axi_awcache,
    input  wire [2:0]               s_axi_awprot,
    input  wire                     s_axi_awvalid,
    output wire                     s_axi_awready,
    input  wire [S_DATA_WIDTH-1:0]  s_axi_wdata,
    input  wire [S_STRB_WIDTH-1:0]  s_axi_wstrb,
    input  wire                     s_axi_wlast,
    input  wire                     s_axi_wvalid,
    output wire                     s_axi_wready,
    output wire [ID_WIDTH-1:0]      s_axi_bid,
    output wire [1:0]               s_axi_bresp,
    output wire                     s_axi_bvalid,
    input  wire                     s_axi_bready,

    /*
     * AXI4 write master
     */
    output wire [ID_WIDTH-1:0]      m_axi_awid,
    output wire [M_ADDR_WIDTH-1:0]  m_axi_awaddr,
    output wire [7:0]               m_axi_awlen,
    output wire [2:0]               m_axi_awsize,
    output wire [1:0]               m_axi_awburst,
    output wire                     m_axi_awlock,
    output wire [3:0]               m_axi_awcache,
    output wire [2:0]               m_axi_awprot,
    output wire                     m_axi_awvalid,
    input  wire                     m_axi_awready,
    output wire [M_DATA_WIDTH-1:0]  m_axi_wdata,
    output wire [M_STRB_WIDTH-1:0]  m_axi_wstrb,
    output wire                     m_axi_wlast,
    output wire                     m_axi_wvalid,
    input  wire                     m_axi_wready,
    input  wire [ID_WIDTH-1:0]      m_axi_bid,
    input  wire [1:0]               m_axi_bresp,
    input  wire                     m_axi_bvalid,
    output wire                     m_axi_bready,

    /*
     * Refused bursts (one-cycle pulses)
     */
    output wire                     addr_error,
    output wire                     burst_error
);

localparam S_BYTES = S_STRB_WIDTH;
localparam M_BYTES = M_STRB_WIDTH;
localparam S_SHIFT = $clog2(S_BYTES);
localparam M_SHIFT = $clog2(M_BYTES);
// AWSIZE of a full-width slave beat (BUG 1 and 2 only).
localparam [2:0] S_SIZE = S_SHIFT[2:0];
// Slave beats in a master beat.
localparam SLOTS = M_BYTES / S_BYTES;
// The last byte's offset from a burst's first master beat (a burst stays in its 4 KiB page).
localparam OFF_WIDTH = 13;

localparam [1:0] BURST_INCR = 2'b01;

localparam [1:0]
    RESP_SLVERR = 2'b10,
    RESP_DECERR = 2'b11;

localparam [2:0]
    STATE_IDLE = 3'd0,
    STATE_DATA = 3'd1,
    STATE_DROP = 3'd2,
    STATE_RESP = 3'd3,
    STATE_SETUP = 3'd4;

// check configuration
initial begin
    if (S_STRB_WIDTH * 8 != S_DATA_WIDTH || M_STRB_WIDTH * 8 != M_DATA_WIDTH) begin
        $error("Error: strobe widths must be data widths / 8 (instance %m)");
        $finish;
    end

    if (BUG < 0 || BUG > 2) begin
        $error("Error: BUG must be 0, 1 or 2 (instance %m)");
        $finish;
    end

    if (2**S_SHIFT != S_BYTES || 2**M_SHIFT != M_BYTES || M_BYTES <= S_BYTES) begin
        $error("Error: data widths must be powers of two with M_DATA_WIDTH > S_DATA_WIDTH (instance %m)");
        $finish;
    end

    if (M_BYTES > 4096 || S_ADDR_WIDTH <= M_ADDR_WIDTH || M_ADDR_WIDTH <= M_SHIFT) begin
        $error("Error: address widths must satisfy M_SHIFT < M_ADDR_WIDTH < S_ADDR_WIDTH (instance %m)");
        $finish;
    end
end

reg [2:0] state_reg = STATE_IDLE;
// Bursts passed to the master whose response has not come back.
reg [8:0] outstanding_reg = 9'd0;
// The refused burst's response.
reg [ID_WIDTH-1:0] err_id_reg = {ID_WIDTH{1'b0}};
reg [1:0] err_resp_reg = RESP_SLVERR;
reg err_offer_reg = 1'b0;                           // the refused burst's response is offered
reg refused_reg = 1'b0;                             // the burst in its setup cycle is refused
reg addr_error_reg = 1'b0;
reg burst_error_reg = 1'b0;
reg [M_SHIFT-1:0] addr_reg = {M_SHIFT{1'b0}};       // the first slave beat's offset in its master beat
reg [2:0] size_reg = 3'd0;
reg [7:0] beats_left_reg = 8'd0;                    // slave beats after the next one
reg [M_DATA_WIDTH-1:0] acc_data_reg = {M_DATA_WIDTH{1'b0}};
reg [M_STRB_WIDTH-1:0] acc_strb_reg = {M_STRB_WIDTH{1'b0}};

reg [ID_WIDTH-1:0]     m_axi_awid_reg = {ID_WIDTH{1'b0}};
reg [M_ADDR_WIDTH-1:0] m_axi_awaddr_reg = {M_ADDR_WIDTH{1'b0}};
reg [7:0]              m_axi_awlen_reg = 8'd0;
reg                    m_axi_awlock_reg = 1'b0;
reg [3:0]              m_axi_awcache_reg = 4'd0;
reg [2:0]              m_axi_awprot_reg = 3'd0;
reg                    m_axi_awvalid_reg = 1'b0;
reg [M_DATA_WIDTH-1:0] m_axi_wdata_reg = {M_DATA_WIDTH{1'b0}};
reg [M_STRB_WIDTH-1:0] m_axi_wstrb_reg = {M_STRB_WIDTH{1'b0}};
reg                    m_axi_wlast_reg = 1'b0;
reg                    m_axi_wvalid_reg = 1'b0;

assign s_axi_awready = state_reg == STATE_IDLE && !m_axi_awvalid_reg && outstanding_reg != 9'h1ff;

assign m_axi_awid = m_axi_awid_reg;
assign m_axi_awaddr = m_axi_awaddr_reg;
assign m_axi_awlen = m_axi_awlen_reg;
assign m_axi_awsize = M_SHIFT[2:0];
assign m_axi_awburst = BURST_INCR;
assign m_axi_awlock = m_axi_awlock_reg;
assign m_axi_awcache = m_axi_awcache_reg;
assign m_axi_awprot = m_axi_awprot_reg;
assign m_axi_awvalid = m_axi_awvalid_reg;
assign m_axi_wdata = m_axi_wdata_reg;
assign m_axi_wstrb = m_axi_wstrb_reg;
assign m_axi_wlast = m_axi_wlast_reg;
assign m_axi_wvalid = m_axi_wvalid_reg;

// Responses pass through, except the refused burst's, which goes out alone once nothing is
// outstanding. That it is being offered is a register (set the cycle after the count reaches
// zero, which it keeps in STATE_RESP), so the count does not steer BREADY, whose handshake
// steps the count again.
wire err_resp = err_offer_reg;
assign s_axi_bid = err_resp ? err_id_reg : m_axi_bid;
assign s_axi_bresp = err_resp ? err_resp_reg : m_axi_bresp;
assign s_axi_bvalid = err_resp || m_axi_bvalid;
assign m_axi_bready = s_axi_bready && !err_resp;
assign addr_error = addr_error_reg;
assign burst_error = burst_error_reg;


/*
 * Address phase: the master burst that covers the slave burst's bytes.
 */
// A size above the slave's width is taken as the full width.
wire [2:0] aw_size = s_axi_awsize > S_SHIFT[2:0] ? S_SHIFT[2:0] : s_axi_awsize;
// The start's offset within its master beat.
wire [M_SHIFT-1:0] aw_off = s_axi_awaddr[M_SHIFT-1:0];
// The master beats after the first are those that the burst's last byte lies beyond its first
// master beat: its last byte's offset from that beat's start, over the master's width. That
// offset is the size-aligned start within the master beat plus (AWLEN + 1) * 2**size - 1,
// which is the start with its bits below the size set (the aligned start has zeros there)
// plus AWLEN * 2**size: one adder, and no subtraction, on the path from AWLEN.
wire [OFF_WIDTH-1:0] aw_end = {{OFF_WIDTH-M_SHIFT{1'b0}},
    aw_off | ~({M_SHIFT{1'b1}} << aw_size)}
    + ({{OFF_WIDTH-8{1'b0}}, s_axi_awlen} << aw_size);
wire [OFF_WIDTH-1:0] aw_lines = aw_end >> M_SHIFT;

/*
 * Data phase: where the next slave beat goes. What the merge needs of a beat (the slave lanes
 * it may write, its slot in the master beat, whether the master beat is complete after it)
 * is kept in registers, computed when its address becomes known (at the address phase for
 * the first beat, with the previous beat for the others), so the merge itself is a
 * selection by registered masks.
 */
// The lanes of the size-aligned transfer after the one on `lanes`: the run moved up by its
// own width (`step`, one-hot: bit k for 2**k lanes), wrapping to lane 0 when the next transfer
// starts the next slave beat. Each lane is an AND-OR over the sizes, with fixed indices.
function [S_BYTES-1:0] lanes_after(input [S_BYTES-1:0] lanes, input [S_SHIFT:0] step);
    integer l;
    integer k;
    begin
        lanes_after = {S_BYTES{1'b0}};
        for (l = 0; l < S_BYTES; l = l + 1) begin
            for (k = 0; k <= S_SHIFT; k = k + 1) begin
                lanes_after[l] = lanes_after[l]
                    || (step[k] && lanes[(l + S_BYTES - (1 << k)) % S_BYTES]);
            end
        end
    end
endfunction

// The lanes of the whole size-aligned transfer that holds `addr`: those that agree with it in
// every bit from the size up.
function [S_BYTES-1:0] transfer_lanes(input [S_SHIFT-1:0] addr, input [2:0] size);
    integer l;
    reg [S_SHIFT-1:0] high;
    begin
        high = {S_SHIFT{1'b1}} << size;
        for (l = 0; l < S_BYTES; l = l + 1) begin
            transfer_lanes[l] = ((l[S_SHIFT-1:0] ^ addr) & high) == {S_SHIFT{1'b0}};
        end
    end
endfunction

// The slave lanes a beat at `addr` of `size` writes: from its address up to the end of its
// size-aligned transfer.
function [S_BYTES-1:0] beat_lanes(input [S_SHIFT-1:0] addr, input [2:0] size);
    integer l;
    reg [S_BYTES-1:0] run;
    begin
        run = transfer_lanes(addr, size);
        for (l = 0; l < S_BYTES; l = l + 1) begin
            beat_lanes[l] = run[l] && l[S_SHIFT-1:0] >= addr;
        end
    end
endfunction

// Whether the master beat is complete after a beat at `addr` (the next one starts another):
// every address bit from the size up to the master's width is one.
function beat_ends_line(input [M_SHIFT-1:0] addr, input [2:0] size);
    beat_ends_line = &(addr | ~({M_SHIFT{1'b1}} << size));
endfunction

reg [S_BYTES-1:0] lanes_reg = {S_BYTES{1'b0}};
reg [S_SHIFT:0] step_reg = {S_SHIFT+1{1'b0}};  // one-hot: bit k for a size of 2**k bytes
// The whole size-aligned transfer of the beat on lanes_reg (wider than lanes_reg only for an
// unaligned first beat).
reg [S_BYTES-1:0] run_reg = {S_BYTES{1'b0}};
reg [SLOTS-1:0] slot_reg = {SLOTS{1'b0}};  // one-hot
reg line_end_reg = 1'b0;
reg last_reg = 1'b0;

// The next beat, stepped from this one's registers rather than from an address (an adder
// and a decode of its sum would not fit the cycle): its run is this one's moved by its width,
// its slot the next one when this beat ends its slave beat, and it ends its master beat when
// it ends its slave beat in the last slot.
wire [S_BYTES-1:0] run_next = lanes_after(run_reg, step_reg);
wire [SLOTS-1:0] slot_next = run_reg[S_BYTES-1] ? {slot_reg[SLOTS-2:0], slot_reg[SLOTS-1]}
    : slot_reg;
wire line_end_next = slot_next[SLOTS-1] && run_next[S_BYTES-1];
wire beat_last = last_reg;
// The beat after this one starts a new master beat: send the gathered one.
wire beat_emit = last_reg || line_end_reg;

// A beat that completes a master beat waits until the output register is empty; the others
// only gather. WREADY therefore does not follow the master's WREADY in the same cycle (which
// would run the FIFO's ready through this block and back into its output register), and the
// output register still has the other slave beats of a full-width master beat to drain.
assign s_axi_wready = (state_reg == STATE_DATA && (!beat_emit || !m_axi_wvalid_reg))
    || state_reg == STATE_DROP;

// The slave's strobes as the merge below takes them. Only BUG 2 puts logic here (it drops a
// narrow beat's top lane); otherwise they are the port itself, so that the card's build is
// the same netlist with or without the seeded bug's code.
wire [S_STRB_WIDTH-1:0] merge_strb;

generate
    if (BUG == 2) begin : g_bug_drop_lane
        assign merge_strb = (size_reg < S_SIZE)
            ? {1'b0, s_axi_wstrb[S_STRB_WIDTH-2:0]} : s_axi_wstrb;
    end else begin : g_strb
        assign merge_strb = s_axi_wstrb;
    end
endgenerate

reg [M_DATA_WIDTH-1:0] merged_data;
reg [M_STRB_WIDTH-1:0] merged_strb;

integer i;

always @* begin
    for (i = 0; i < M_BYTES; i = i + 1) begin
        if (slot_reg[i / S_BYTES] && lanes_reg[i % S_BYTES] && merge_strb[i % S_BYTES]) begin
            if (BUG == 1 && size_reg < S_SIZE) begin
                merged_data[8*i +: 8] = s_axi_wdata[7:0];
            end else begin
                merged_data[8*i +: 8] = s_axi_wdata[8*(i % S_BYTES) +: 8];
            end
            merged_strb[i] = 1'b1;
        end else begin
            merged_data[8*i +: 8] = acc_data_reg[8*i +: 8];
            merged_strb[i] = acc_strb_reg[i];
        end
    end
end

wire aw_fire = s_axi_awvalid && s_axi_awready;
wire w_fire = s_axi_wvalid && s_axi_wready;
wire aw_out_of_range = s_axi_awaddr[S_ADDR_WIDTH-1:M_ADDR_WIDTH] != 0;
wire aw_not_incr = s_axi_awburst != BURST_INCR;
wire aw_refused = aw_out_of_range || aw_not_incr;

// WLAST is replaced by the beat count.
wire unused = &{1'b0, s_axi_wlast, aw_lines[OFF_WIDTH-1:8], 1'b0};

always @(posedge clk) begin
    addr_error_reg <= 1'b0;
    burst_error_reg <= 1'b0;
    outstanding_reg <= outstanding_reg + {8'd0, m_axi_awvalid_reg && m_axi_awready}
        - {8'd0, m_axi_bvalid && m_axi_bready};

    if (m_axi_awvalid_reg && m_axi_awready) begin
        m_axi_awvalid_reg <= 1'b0;
    end
    // The output register fills with a beat that completes a master beat, which WREADY lets in
    // only while the register is empty, and empties on the master's handshake. Written out
    // rather than through WREADY, so the handshake is not a node of its own in front of it.
    if (m_axi_wvalid_reg) begin
        if (m_axi_wready) begin
            m_axi_wvalid_reg <= 1'b0;
        end
    end else if (s_axi_wvalid && state_reg == STATE_DATA && beat_emit) begin
        m_axi_wvalid_reg <= 1'b1;
    end

    if (aw_fire) begin
        // The burst's geometry is taken whether it is served or refused (a refused one only
        // counts its beats). The refusal is registered and acts in the setup cycle: decoded
        // from the address, it would not also fit the handshake and the next state here.
        m_axi_awid_reg <= s_axi_awid;
        m_axi_awaddr_reg <= {s_axi_awaddr[M_ADDR_WIDTH-1:M_SHIFT], {M_SHIFT{1'b0}}};
        m_axi_awlen_reg <= aw_lines[7:0];
        m_axi_awlock_reg <= s_axi_awlock;
        m_axi_awcache_reg <= s_axi_awcache;
        m_axi_awprot_reg <= s_axi_awprot;
        refused_reg <= aw_refused;
        addr_reg <= aw_off;
        size_reg <= aw_size;
        step_reg <= {{S_SHIFT{1'b0}}, 1'b1} << aw_size;
        beats_left_reg <= s_axi_awlen;
        last_reg <= s_axi_awlen == 8'd0;
        acc_data_reg <= {M_DATA_WIDTH{1'b0}};
        acc_strb_reg <= {M_STRB_WIDTH{1'b0}};
        err_id_reg <= s_axi_awid;
        err_resp_reg <= aw_out_of_range ? RESP_DECERR : RESP_SLVERR;
        addr_error_reg <= aw_out_of_range;
        burst_error_reg <= !aw_out_of_range && aw_not_incr;
        state_reg <= STATE_SETUP;
    end

    // The first beat's lanes, slot and line end, from the registered address: the one cycle
    // between a burst's address and its first beat.
    if (state_reg == STATE_SETUP) begin
        lanes_reg <= beat_lanes(addr_reg[S_SHIFT-1:0], size_reg);
        run_reg <= transfer_lanes(addr_reg[S_SHIFT-1:0], size_reg);
        slot_reg <= {{SLOTS-1{1'b0}}, 1'b1} << addr_reg[M_SHIFT-1:S_SHIFT];
        line_end_reg <= beat_ends_line(addr_reg, size_reg);
        m_axi_awvalid_reg <= !refused_reg;
        state_reg <= refused_reg ? STATE_DROP : STATE_DATA;
    end

    if (w_fire && state_reg == STATE_DROP) begin
        beats_left_reg <= beats_left_reg - 8'd1;
        last_reg <= beats_left_reg == 8'd1;
        if (beat_last) begin
            state_reg <= STATE_RESP;
        end
    end else if (w_fire) begin
        if (beat_emit) begin
            m_axi_wdata_reg <= merged_data;
            m_axi_wstrb_reg <= merged_strb;
            m_axi_wlast_reg <= beat_last;
            acc_data_reg <= {M_DATA_WIDTH{1'b0}};
            acc_strb_reg <= {M_STRB_WIDTH{1'b0}};
        end else begin
            acc_data_reg <= merged_data;
            acc_strb_reg <= merged_strb;
        end
        beats_left_reg <= beats_left_reg - 8'd1;
        // Every beat after the first is aligned to its size: its lanes are its whole run.
        lanes_reg <= run_next;
        run_reg <= run_next;
        slot_reg <= slot_next;
        line_end_reg <= line_end_next;
        last_reg <= beats_left_reg == 8'd1;
        if (beat_last) begin
            state_reg <= STATE_IDLE;
        end
    end

    if (state_reg == STATE_RESP && outstanding_reg == 9'd0) begin
        err_offer_reg <= 1'b1;
    end
    if (err_resp && s_axi_bready) begin
        err_offer_reg <= 1'b0;
        state_reg <= STATE_IDLE;
    end

    if (rst) begin
        state_reg <= STATE_IDLE;
        err_offer_reg <= 1'b0;
        outstanding_reg <= 9'd0;
        addr_error_reg <= 1'b0;
        burst_error_reg <= 1'b0;
        m_axi_awvalid_reg <= 1'b0;
        m_axi_wvalid_reg <= 1'b0;
    end
end

endmodule

`resetall
