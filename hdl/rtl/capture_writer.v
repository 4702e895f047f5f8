/*
 * Capture writer: frames from an AXI-Stream into a ring buffer in memory through AXI4 write
 * bursts.
 *
 * The ring is [ring_base, ring_base + ring_size); ring_base and ring_size are multiples of
 * 4 KiB. Each frame starts on a beat boundary (DATA_WIDTH/8 bytes) and is padded up to the next
 * one (the padding bytes are not written: their strobes are clear). The host owns rptr, the
 * writer owns wptr; both are byte offsets into the ring and the ring is empty when they are
 * equal.
 *
 * Overflow policy, drop-new: when the first beat of a frame arrives, the writer reserves room
 * for frame_bytes (rounded up to whole beats); when the ring cannot hold that much without
 * reaching rptr the whole frame is consumed and discarded, and overflow_count counts it. Unread
 * data is never overwritten. A frame longer than its reservation is cut to it.
 *
 * Bursts never cross a BURST_BEATS-beat boundary of the ring (so never a 4 KiB boundary nor the
 * ring's end), and end early at the end of a frame. A burst's W beats are sent only after its
 * AW handshake. wptr advances when a burst's write response arrives: data before wptr is in
 * memory.
 *
 * A ring that is not usable (ring_size below 4 KiB or not a multiple of it, or the ring
 * ending past the 2**PTR_WIDTH-byte memory) takes no frame: each one is consumed and
 * discarded, and ring_error pulses for it. Addresses are formed without wrapping, so even a
 * wrong configuration cannot write below the ring.
 *
 * clear_counters zeroes the counters. ring_reset empties the ring; pulse it only while no frame is in progress and no burst is
 * outstanding (the register file does so when the ring is reconfigured while capture is idle).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module capture_writer #
(
    // Width of the stream and AXI data bus in bits
    parameter DATA_WIDTH = 128,
    // Width of the AXI address bus in bits
    parameter ADDR_WIDTH = 64,
    // Width of the stream tkeep and AXI wstrb (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // Width of the ring offsets in bits (the ring lies in a 2**PTR_WIDTH-byte memory)
    parameter PTR_WIDTH = 31,
    // Width of frame_bytes in bits (frames up to 2**FRAME_LEN_WIDTH - 1 bytes)
    parameter FRAME_LEN_WIDTH = 17,
    // Longest burst in beats (a power of two; BURST_BEATS * DATA_WIDTH/8 must divide 4096)
    parameter BURST_BEATS = 16,
    // Bursts that may be queued or outstanding at once (a power of two)
    parameter DESC_DEPTH = 8
)
(
    input  wire                        clk,
    input  wire                        rst,

    /*
     * Configuration, held stable while capturing
     */
    input  wire [PTR_WIDTH-1:0]        ring_base,
    input  wire [PTR_WIDTH-1:0]        ring_size,
    input  wire [PTR_WIDTH-1:0]        rptr,
    input  wire [FRAME_LEN_WIDTH-1:0]  frame_bytes,
    input  wire                        ring_reset,
    input  wire                        clear_counters,

    /*
     * AXI-Stream input (frames)
     */
    input  wire [DATA_WIDTH-1:0]       s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]       s_axis_tkeep,
    input  wire                        s_axis_tlast,
    input  wire                        s_axis_tvalid,
    output wire                        s_axis_tready,

    /*
     * AXI4 write master
     */
    output wire [ADDR_WIDTH-1:0]       m_axi_awaddr,
    output wire [7:0]                  m_axi_awlen,
    output wire [2:0]                  m_axi_awsize,
    output wire [1:0]                  m_axi_awburst,
    output wire                        m_axi_awvalid,
    input  wire                        m_axi_awready,
    output wire [DATA_WIDTH-1:0]       m_axi_wdata,
    output wire [KEEP_WIDTH-1:0]       m_axi_wstrb,
    output wire                        m_axi_wlast,
    output wire                        m_axi_wvalid,
    input  wire                        m_axi_wready,
    input  wire [1:0]                  m_axi_bresp,
    input  wire                        m_axi_bvalid,
    output wire                        m_axi_bready,

    /*
     * Status
     */
    output wire [PTR_WIDTH-1:0]        wptr,
    output wire [PTR_WIDTH-1:0]        fill,
    output wire [63:0]                 overflow_count,
    output wire                        overflow_event,
    output wire [63:0]                 frame_count,
    output wire [63:0]                 bresp_error_count,
    output wire                        busy,
    output wire                        ring_error
);

localparam BEAT_BYTES = KEEP_WIDTH;
localparam BEAT_BITS = $clog2(BEAT_BYTES);
localparam BURST_BYTES = BURST_BEATS * BEAT_BYTES;
localparam BURST_BITS = $clog2(BURST_BYTES);
localparam BURST_CNT_WIDTH = $clog2(BURST_BEATS);
localparam DATA_DEPTH = 2 * BURST_BEATS;
localparam DATA_PTR_WIDTH = $clog2(DATA_DEPTH);
localparam DESC_PTR_WIDTH = $clog2(DESC_DEPTH);
localparam BEATS_WIDTH = FRAME_LEN_WIDTH - BEAT_BITS + 1;

// AXI burst type and size codes
localparam [1:0] BURST_INCR = 2'b01;
localparam [2:0] AXI_SIZE = BEAT_BITS[2:0];
localparam [1:0] RESP_OKAY = 2'b00;

// Input states
localparam [1:0]
    STATE_IDLE = 2'd0,
    STATE_PASS = 2'd1,
    STATE_DROP = 2'd2;

// check configuration
initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH || BEAT_BYTES != (1 << BEAT_BITS)) begin
        $error("Error: DATA_WIDTH must be a power-of-two number of bytes (instance %m)");
        $finish;
    end

    if (BURST_BEATS < 2 || BURST_BEATS > 256 || BURST_BEATS != (1 << BURST_CNT_WIDTH)
            || 4096 % BURST_BYTES != 0) begin
        $error("Error: BURST_BEATS must be a power of two from 2 to 256 whose bytes divide 4096 (instance %m)");
        $finish;
    end

    if (DESC_DEPTH < 2 || DESC_DEPTH != (1 << DESC_PTR_WIDTH)) begin
        $error("Error: DESC_DEPTH must be a power of two of at least 2 (instance %m)");
        $finish;
    end

    if (PTR_WIDTH < 13 || PTR_WIDTH > ADDR_WIDTH || FRAME_LEN_WIDTH <= BEAT_BITS) begin
        $error("Error: PTR_WIDTH must be 13..ADDR_WIDTH and FRAME_LEN_WIDTH > log2(beat bytes) (instance %m)");
        $finish;
    end
end

reg [1:0] state_reg = STATE_IDLE;

reg [PTR_WIDTH-1:0] issue_ptr_reg = {PTR_WIDTH{1'b0}};
reg [PTR_WIDTH-1:0] burst_start_reg = {PTR_WIDTH{1'b0}};
reg [BURST_CNT_WIDTH-1:0] burst_cnt_reg = {BURST_CNT_WIDTH{1'b0}};
reg [BEATS_WIDTH-1:0] resv_reg = {BEATS_WIDTH{1'b0}};
reg [PTR_WIDTH-1:0] wptr_reg = {PTR_WIDTH{1'b0}};
reg [63:0] overflow_count_reg = 64'd0;
reg overflow_event_reg = 1'b0;
reg [63:0] frame_count_reg = 64'd0;
reg [63:0] bresp_error_count_reg = 64'd0;
reg [PTR_WIDTH-1:0] fill_reg = {PTR_WIDTH{1'b0}};
reg ring_ok_reg = 1'b0;
reg ring_error_reg = 1'b0;
// The room check's registers: the bytes in use, whether the frame fits, and the cycles
// until both follow the issue pointer.
reg [PTR_WIDTH-1:0] used_reg = {PTR_WIDTH{1'b0}};
reg [BEATS_WIDTH-1:0] frame_beats_reg = {BEATS_WIDTH{1'b0}};
reg fits_reg = 1'b0;
reg [1:0] settle_reg = 2'd2;
reg [PTR_WIDTH-1:0] rptr_seen_reg = {PTR_WIDTH{1'b0}};  // rptr as the room check last saw it
reg rptr_moved_reg = 1'b0;  // rptr changed at the last edge
reg settled_reg = 1'b0;     // settle_reg is 0 and rptr_moved_reg low: the room check is current
reg [PTR_WIDTH:0] fill_diff_reg = {PTR_WIDTH+1{1'b0}};
// The offset of the ring's last beat, and flags for the reservation's last beat and its end.
// issue_ptr_reg is at the ring's last beat (ring_size - BEAT_BYTES, kept as a flag),
// and the offset one beat before it, from which the flag is set a beat ahead.
reg issue_at_end_reg = 1'b0;
reg [PTR_WIDTH-1:0] ring_before_last_reg = {PTR_WIDTH{1'b0}};
reg resv_one_reg = 1'b0;
reg resv_zero_reg = 1'b1;

// Beat FIFO: data, strobes and the last-of-burst marker.
reg [DATA_WIDTH-1:0] data_mem[DATA_DEPTH-1:0];
reg [KEEP_WIDTH-1:0] strb_mem[DATA_DEPTH-1:0];
reg last_mem[DATA_DEPTH-1:0];
reg [DATA_PTR_WIDTH:0] data_wr_reg = {DATA_PTR_WIDTH+1{1'b0}};
reg [DATA_PTR_WIDTH:0] data_rd_reg = {DATA_PTR_WIDTH+1{1'b0}};

// Burst descriptors: pushed when a burst closes, read once for AW and retired on B.
reg [PTR_WIDTH-1:0] desc_start_mem[DESC_DEPTH-1:0];
reg [7:0] desc_len_mem[DESC_DEPTH-1:0];
reg [PTR_WIDTH-1:0] desc_end_mem[DESC_DEPTH-1:0];
reg desc_frame_end_mem[DESC_DEPTH-1:0];
reg [DESC_PTR_WIDTH:0] desc_wr_reg = {DESC_PTR_WIDTH+1{1'b0}};
reg [DESC_PTR_WIDTH:0] desc_aw_reg = {DESC_PTR_WIDTH+1{1'b0}};
reg [DESC_PTR_WIDTH:0] desc_b_reg = {DESC_PTR_WIDTH+1{1'b0}};

// Bursts whose AW handshake is done and whose W beats are not all loaded yet.
reg [DESC_PTR_WIDTH:0] w_credit_reg = {DESC_PTR_WIDTH+1{1'b0}};
reg w_credit_nz_reg = 1'b0;   // w_credit_reg != 0, kept as a flag for the W path's timing
reg data_empty_reg = 1'b1;    // data_wr_reg == data_rd_reg, likewise
reg [DATA_PTR_WIDTH:0] data_count_reg = {DATA_PTR_WIDTH+1{1'b0}};
reg [DESC_PTR_WIDTH:0] desc_count_reg = {DESC_PTR_WIDTH+1{1'b0}};


reg [ADDR_WIDTH-1:0] m_axi_awaddr_reg = {ADDR_WIDTH{1'b0}};
reg [7:0] m_axi_awlen_reg = 8'd0;
reg m_axi_awvalid_reg = 1'b0;
reg [DATA_WIDTH-1:0] m_axi_wdata_reg = {DATA_WIDTH{1'b0}};
reg [KEEP_WIDTH-1:0] m_axi_wstrb_reg = {KEEP_WIDTH{1'b0}};
reg m_axi_wlast_reg = 1'b0;
reg m_axi_wvalid_reg = 1'b0;

// TREADY is a register, set for the next cycle from the state that cycle will have and from
// the beat and descriptor counts, with room for the one beat and descriptor this cycle may
// still add, so no count or pointer comparison sits in front of it.
reg s_axis_tready_reg = 1'b0;
wire data_push = state_reg == STATE_PASS && s_axis_tvalid && s_axis_tready_reg && !resv_zero_reg;
wire desc_push = data_push && burst_close;
wire desc_aw_pending = desc_wr_reg != desc_aw_reg;
wire room = data_count_reg <= DATA_DEPTH - 3 && desc_count_reg <= DESC_DEPTH - 3;

assign s_axis_tready = s_axis_tready_reg;

assign m_axi_awaddr = m_axi_awaddr_reg;
assign m_axi_awlen = m_axi_awlen_reg;
assign m_axi_awsize = AXI_SIZE;
assign m_axi_awburst = BURST_INCR;
assign m_axi_awvalid = m_axi_awvalid_reg;
assign m_axi_wdata = m_axi_wdata_reg;
assign m_axi_wstrb = m_axi_wstrb_reg;
assign m_axi_wlast = m_axi_wlast_reg;
assign m_axi_wvalid = m_axi_wvalid_reg;
// Every response is taken at once: the descriptor it retires is already stored.
assign m_axi_bready = 1'b1;

assign wptr = wptr_reg;
assign fill = fill_reg;
assign overflow_count = overflow_count_reg;
assign overflow_event = overflow_event_reg;
assign frame_count = frame_count_reg;
assign bresp_error_count = bresp_error_count_reg;
assign busy = state_reg != STATE_IDLE || desc_wr_reg != desc_b_reg || m_axi_wvalid_reg;
assign ring_error = ring_error_reg;

// Room check for a new frame: the bytes in use from the host's read pointer to the issue
// pointer, plus the padded frame, must stay below the ring size (the ring is never completely
// full, so equal pointers always mean empty). It is computed in two registered steps, so a
// frame may start only once both have seen the issue and read pointers as they are
// (settle_reg). A move of rptr is registered (rptr_moved_reg) before it restarts the wait, so
// that the 31-bit comparison and the wait's own logic are a clock cycle each; the cycle in
// between holds frames back by itself. Whether the wait is over is itself a register
// (settled_reg, computed a cycle ahead from what will restart or end the wait), since the
// decision to take a frame in has TREADY's logic behind it.
wire [FRAME_LEN_WIDTH:0] frame_round = {1'b0, frame_bytes}
    + {{FRAME_LEN_WIDTH+1-BEAT_BITS{1'b0}}, {BEAT_BITS{1'b1}}};
wire [BEATS_WIDTH-1:0] frame_beats = frame_round[FRAME_LEN_WIDTH:BEAT_BITS];
// The bytes within the last beat only matter through the rounding above.
wire [BEAT_BITS-1:0] unused_frame_round = frame_round[BEAT_BITS-1:0];
// (a - b) mod ring_size for offsets a, b in the ring, in two steps: the difference, then the
// ring size added back when it borrowed.
wire [PTR_WIDTH:0] used_diff = {1'b0, issue_ptr_reg} - {1'b0, rptr};
wire [PTR_WIDTH:0] fill_diff = {1'b0, wptr_reg} - {1'b0, rptr};
wire [PTR_WIDTH+1:0] need_bytes = {1'b0, used_reg}
    + ({{PTR_WIDTH+2-BEATS_WIDTH{1'b0}}, frame_beats_reg} << BEAT_BITS);
// The ring is usable when its size is a whole number of 4 KiB pages and it ends inside the
// memory; taken into a register (the configuration is static while capturing).
wire [PTR_WIDTH:0] ring_end = {1'b0, ring_base} + {1'b0, ring_size};
wire ring_ok = ring_size[PTR_WIDTH-1:12] != 0 && ring_size[11:0] == 12'd0
    && ring_end <= {1'b1, {PTR_WIDTH{1'b0}}};

// The offset after the beat being accepted, wrapped at the ring's end; whether the beat
// closes its burst (the ring's end is a burst boundary too, as the size is whole pages).
wire issue_at_end = issue_at_end_reg;
wire [PTR_WIDTH-1:0] issue_ptr_next = issue_at_end ? {PTR_WIDTH{1'b0}} : issue_ptr_reg + BEAT_BYTES;
wire beat_in = s_axis_tvalid && s_axis_tready_reg;
wire beat_keep = state_reg == STATE_PASS && !resv_zero_reg;
wire burst_close = s_axis_tlast || &issue_ptr_reg[BURST_BITS-1:BEAT_BITS] || issue_at_end
    || resv_one_reg;

// The room check has seen the pointers as they are.
wire settled = settled_reg;

wire aw_fire = m_axi_awvalid_reg && m_axi_awready;
wire aw_load = (!m_axi_awvalid_reg || m_axi_awready) && desc_aw_pending;
wire w_load = (!m_axi_wvalid_reg || m_axi_wready) && !data_empty_reg && w_credit_nz_reg;
wire w_load_last = w_load && last_mem[data_rd_reg[DATA_PTR_WIDTH-1:0]];

always @(posedge clk) begin
    overflow_event_reg <= 1'b0;
    ring_error_reg <= 1'b0;
    ring_ok_reg <= ring_ok;
    ring_before_last_reg <= ring_size - 2 * BEAT_BYTES;
    frame_beats_reg <= frame_beats;
    used_reg <= used_diff[PTR_WIDTH] ? used_diff[PTR_WIDTH-1:0] + ring_size : used_diff[PTR_WIDTH-1:0];
    fits_reg <= need_bytes < {2'b00, ring_size};
    rptr_seen_reg <= rptr;
    rptr_moved_reg <= rptr != rptr_seen_reg;
    // settle_reg is 0 next cycle unless something restarts the wait (below: the reader
    // moving, a beat kept, a ring reset or a reset), and rptr_moved_reg low unless rptr moves.
    settled_reg <= !settle_reg[1] && !rptr_moved_reg && rptr == rptr_seen_reg
        && !(state_reg == STATE_PASS && beat_in && beat_keep) && !ring_reset && !rst;
    if (rptr_moved_reg) begin
        // The reader moved: wait for the room check to see it.
        settle_reg <= 2'd2;
    end else if (settle_reg != 2'd0) begin
        settle_reg <= settle_reg - 2'd1;
    end

    // input side: reserve or drop whole frames, fill the beat FIFO, close bursts
    case (state_reg)
        STATE_IDLE: begin
            if (s_axis_tvalid && settled) begin
                if (!ring_ok_reg) begin
                    state_reg <= STATE_DROP;
                    ring_error_reg <= 1'b1;
                end else if (fits_reg) begin
                    state_reg <= STATE_PASS;
                    resv_reg <= frame_beats_reg;
                    resv_one_reg <= frame_beats_reg == 1;
                    resv_zero_reg <= frame_beats_reg == 0;
                end else begin
                    state_reg <= STATE_DROP;
                    overflow_count_reg <= overflow_count_reg + 1;
                    overflow_event_reg <= 1'b1;
                end
            end
        end
        STATE_PASS: begin
            if (beat_in) begin
                if (beat_keep) begin
                    data_mem[data_wr_reg[DATA_PTR_WIDTH-1:0]] <= s_axis_tdata;
                    strb_mem[data_wr_reg[DATA_PTR_WIDTH-1:0]] <= s_axis_tkeep;
                    last_mem[data_wr_reg[DATA_PTR_WIDTH-1:0]] <= burst_close;
                    data_wr_reg <= data_wr_reg + 1;
                    issue_ptr_reg <= issue_ptr_next;
                    issue_at_end_reg <= !issue_at_end && issue_ptr_reg == ring_before_last_reg;
                    settle_reg <= 2'd2;
                    resv_reg <= resv_reg - 1;
                    resv_one_reg <= resv_reg == 2;
                    resv_zero_reg <= resv_reg == 1;
                    if (burst_close) begin
                        desc_start_mem[desc_wr_reg[DESC_PTR_WIDTH-1:0]] <= burst_start_reg;
                        desc_len_mem[desc_wr_reg[DESC_PTR_WIDTH-1:0]] <= {{8-BURST_CNT_WIDTH{1'b0}}, burst_cnt_reg};
                        desc_end_mem[desc_wr_reg[DESC_PTR_WIDTH-1:0]] <= issue_ptr_next;
                        desc_frame_end_mem[desc_wr_reg[DESC_PTR_WIDTH-1:0]] <= s_axis_tlast || resv_reg == 1;
                        desc_wr_reg <= desc_wr_reg + 1;
                        burst_start_reg <= issue_ptr_next;
                        burst_cnt_reg <= {BURST_CNT_WIDTH{1'b0}};
                    end else begin
                        burst_cnt_reg <= burst_cnt_reg + 1;
                    end
                end
                if (s_axis_tlast) begin
                    state_reg <= STATE_IDLE;
                end
            end
        end
        STATE_DROP: begin
            if (beat_in && s_axis_tlast) begin
                state_reg <= STATE_IDLE;
            end
        end
        default: begin
            state_reg <= STATE_IDLE;
        end
    endcase

    // AW: one descriptor per burst
    if (aw_load) begin
        m_axi_awaddr_reg <= {{ADDR_WIDTH-PTR_WIDTH{1'b0}}, ring_base}
            + {{ADDR_WIDTH-PTR_WIDTH{1'b0}}, desc_start_mem[desc_aw_reg[DESC_PTR_WIDTH-1:0]]};
        m_axi_awlen_reg <= desc_len_mem[desc_aw_reg[DESC_PTR_WIDTH-1:0]];
        m_axi_awvalid_reg <= 1'b1;
        desc_aw_reg <= desc_aw_reg + 1;
    end else if (m_axi_awready) begin
        m_axi_awvalid_reg <= 1'b0;
    end

    // W: beats of bursts whose address is accepted
    if (w_load) begin
        m_axi_wdata_reg <= data_mem[data_rd_reg[DATA_PTR_WIDTH-1:0]];
        m_axi_wstrb_reg <= strb_mem[data_rd_reg[DATA_PTR_WIDTH-1:0]];
        m_axi_wlast_reg <= last_mem[data_rd_reg[DATA_PTR_WIDTH-1:0]];
        m_axi_wvalid_reg <= 1'b1;
        data_rd_reg <= data_rd_reg + 1;
    end else if (m_axi_wready) begin
        m_axi_wvalid_reg <= 1'b0;
    end

    if (aw_fire && !w_load_last) begin
        w_credit_reg <= w_credit_reg + 1;
        w_credit_nz_reg <= 1'b1;
    end else if (!aw_fire && w_load_last) begin
        w_credit_reg <= w_credit_reg - 1;
        w_credit_nz_reg <= w_credit_reg != 1;
    end

    // The FIFO's level as a count beside the pointers, so that emptiness is a flag.
    if (data_push && !w_load) begin
        data_count_reg <= data_count_reg + 1;
    end else if (w_load && !data_push) begin
        data_count_reg <= data_count_reg - 1;
    end
    data_empty_reg <= !data_push && (data_empty_reg || (w_load && data_count_reg == 1));
    if (desc_push && !m_axi_bvalid) begin
        desc_count_reg <= desc_count_reg + 1;
    end else if (m_axi_bvalid && !desc_push) begin
        desc_count_reg <= desc_count_reg - 1;
    end

    // TREADY for the next cycle: in DROP always; in PASS while there is room, until the
    // frame's last beat is taken; from IDLE as soon as a frame is taken in or dropped.
    case (state_reg)
        STATE_IDLE: s_axis_tready_reg <= s_axis_tvalid && settled
            && (!ring_ok_reg || !fits_reg || room);
        STATE_PASS: s_axis_tready_reg <= !(s_axis_tvalid && s_axis_tready_reg && s_axis_tlast) && room;
        STATE_DROP: s_axis_tready_reg <= !(s_axis_tvalid && s_axis_tready_reg && s_axis_tlast);
        default: s_axis_tready_reg <= 1'b0;
    endcase

    // B: the burst is in memory, the write pointer moves past it
    if (m_axi_bvalid) begin
        wptr_reg <= desc_end_mem[desc_b_reg[DESC_PTR_WIDTH-1:0]];
        if (desc_frame_end_mem[desc_b_reg[DESC_PTR_WIDTH-1:0]]) begin
            frame_count_reg <= frame_count_reg + 1;
        end
        if (m_axi_bresp != RESP_OKAY) begin
            bresp_error_count_reg <= bresp_error_count_reg + 1;
        end
        desc_b_reg <= desc_b_reg + 1;
    end

    fill_diff_reg <= fill_diff;
    fill_reg <= fill_diff_reg[PTR_WIDTH] ? fill_diff_reg[PTR_WIDTH-1:0] + ring_size
        : fill_diff_reg[PTR_WIDTH-1:0];

    if (clear_counters) begin
        overflow_count_reg <= 64'd0;
        frame_count_reg <= 64'd0;
        bresp_error_count_reg <= 64'd0;
    end

    if (ring_reset) begin
        settle_reg <= 2'd2;
        issue_at_end_reg <= 1'b0;
        issue_ptr_reg <= {PTR_WIDTH{1'b0}};
        burst_start_reg <= {PTR_WIDTH{1'b0}};
        burst_cnt_reg <= {BURST_CNT_WIDTH{1'b0}};
        wptr_reg <= {PTR_WIDTH{1'b0}};
    end

    if (rst) begin
        state_reg <= STATE_IDLE;
        issue_ptr_reg <= {PTR_WIDTH{1'b0}};
        burst_start_reg <= {PTR_WIDTH{1'b0}};
        burst_cnt_reg <= {BURST_CNT_WIDTH{1'b0}};
        resv_reg <= {BEATS_WIDTH{1'b0}};
        wptr_reg <= {PTR_WIDTH{1'b0}};
        fill_reg <= {PTR_WIDTH{1'b0}};
        overflow_count_reg <= 64'd0;
        overflow_event_reg <= 1'b0;
        ring_ok_reg <= 1'b0;
        ring_error_reg <= 1'b0;
        settle_reg <= 2'd2;
        issue_at_end_reg <= 1'b0;
        resv_one_reg <= 1'b0;
        resv_zero_reg <= 1'b1;
        frame_count_reg <= 64'd0;
        bresp_error_count_reg <= 64'd0;
        data_wr_reg <= {DATA_PTR_WIDTH+1{1'b0}};
        data_rd_reg <= {DATA_PTR_WIDTH+1{1'b0}};
        desc_wr_reg <= {DESC_PTR_WIDTH+1{1'b0}};
        desc_aw_reg <= {DESC_PTR_WIDTH+1{1'b0}};
        desc_b_reg <= {DESC_PTR_WIDTH+1{1'b0}};
        w_credit_reg <= {DESC_PTR_WIDTH+1{1'b0}};
        w_credit_nz_reg <= 1'b0;
        data_empty_reg <= 1'b1;
        data_count_reg <= {DATA_PTR_WIDTH+1{1'b0}};
        desc_count_reg <= {DESC_PTR_WIDTH+1{1'b0}};
        s_axis_tready_reg <= 1'b0;
        m_axi_awvalid_reg <= 1'b0;
        m_axi_wvalid_reg <= 1'b0;
    end
end

endmodule

`resetall
