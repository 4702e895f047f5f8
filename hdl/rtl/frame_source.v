/*
 * Frame source: produces frames in the format of docs/frame-format.md on an AXI-Stream
 * master, one 128-bit beat per cycle.
 *
 * Structure: a generator makes one beat per cycle into a two-stage pipeline (stage A builds
 * the beat's bytes, stage B runs the CRC-32 and inserts the trailer), which writes a FIFO of
 * FIFO_DEPTH beats; the FIFO's output register drives m_axis. The generator runs at line rate
 * and the FIFO absorbs the bus's backpressure:
 * - stall policy (drop_policy = 0): the generator waits while the FIFO is full; no frame is
 *   lost and the bus only sees the delay.
 * - drop policy (drop_policy = 1): the generator never waits. A frame starts only if the FIFO
 *   has room for all of its beats; otherwise the whole frame is dropped (frames_dropped counts
 *   it), its slot passes as if it had been sent (its beat count in cycles, then the gap), and
 *   its sequence number is used up, so the receiver sees the gap. A frame is never truncated.
 *   Frames longer than FIFO_DEPTH beats can never be sent under this policy.
 *
 * Periodic mode (oneshot = 0): while enable is high, frames follow each other with
 * gap_cycles idle cycles between the last beat of one frame and the first beat of the next
 * (at the generator; with m_axis_tready high the bus shows the same gap), sequence numbers
 * counting up from 0 after reset. Clearing enable stops after the frame in progress.
 *
 * One-shot mode (oneshot = 1, for ECHO): a frame is made only on request. `send` (a pulse,
 * taken while send_ready is high and ignored otherwise) requests one frame carrying send_seq
 * as its sequence number; one-shot frames always use the stall policy and ignore enable and
 * gap_cycles; they leave the periodic sequence counter alone.
 *
 * The timestamp field is the timestamp input in the cycle the source decided to start the
 * frame (one cycle before its first beat enters the pipeline). frame_len is clamped to
 * 64..65536. Configuration inputs are read when a frame starts (gap_cycles when it ends).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_source #
(
    // Width of the AXI-Stream data bus in bits (the frame layout assumes 128)
    parameter DATA_WIDTH = 128,
    // Width of TKEEP
    parameter KEEP_WIDTH = DATA_WIDTH/8,
    // Beats of buffering between the generator and the bus (a power of two); under the drop
    // policy this is the longest frame that can be sent, 4096 beats = 64 KiB
    parameter FIFO_DEPTH = 4096,
    // Deliberate fault for the host test suite's broken-card test (crates/card-tests), 0 in
    // every real build: when N > 0, the sequence counter does not advance at every N-th
    // periodic frame since reset, so the frame after it repeats its sequence number
    parameter FAULT_SEQ_REPEAT = 0
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * Configuration (held stable by the register file)
     */
    input  wire                   enable,
    input  wire [7:0]             channel,
    input  wire [16:0]            frame_len,
    input  wire [31:0]            gap_cycles,
    input  wire                   pattern,
    input  wire [31:0]            seed,
    input  wire                   drop_policy,
    input  wire [63:0]            timestamp,

    /*
     * One-shot requests (ECHO mode)
     */
    input  wire                   oneshot,
    input  wire                   send,
    input  wire [31:0]            send_seq,

    /*
     * AXI-Stream output
     */
    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tlast,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,

    /*
     * Status
     */
    output wire [63:0]            frames_sent,
    output wire [63:0]            frames_dropped,
    output wire                   send_ready
);

// Frame format constants (docs/frame-format.md).
localparam [31:0] MAGIC = 32'h46514144;
localparam [7:0] VERSION = 8'd1;
localparam [16:0] MIN_LEN = 17'd64;
localparam [16:0] MAX_LEN = 17'h10000;
localparam [31:0] PRBS_SEQ_MULT = 32'h9e3779b9;

localparam FIFO_COUNT_WIDTH = $clog2(FIFO_DEPTH)+1;
localparam FIFO_WIDTH = DATA_WIDTH+KEEP_WIDTH+1;

// Generator states.
localparam [1:0]
    STATE_IDLE = 2'd0,
    STATE_FRAME = 2'd1,
    STATE_SKIP = 2'd2,
    STATE_GAP = 2'd3;

// check configuration
initial begin
    if (DATA_WIDTH != 128) begin
        $error("Error: the frame layout needs DATA_WIDTH = 128 (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH*8 != DATA_WIDTH) begin
        $error("Error: KEEP_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end
    if (FIFO_DEPTH < 8 || (1 << $clog2(FIFO_DEPTH)) != FIFO_DEPTH) begin
        $error("Error: FIFO_DEPTH must be a power of two of at least 8 (instance %m)");
        $finish;
    end
    if (FAULT_SEQ_REPEAT < 0) begin
        $error("Error: FAULT_SEQ_REPEAT must be 0 (no fault) or positive (instance %m)");
        $finish;
    end
end

// Generator state.
reg [1:0] state_reg = STATE_IDLE, state_next;
reg [31:0] seq_ctr_reg = 32'd0, seq_ctr_next;
// FAULT_SEQ_REPEAT only: periodic frames started since the counter last held back.
reg [31:0] fault_cnt_reg = 32'd0, fault_cnt_next;
reg [31:0] gap_cnt_reg = 32'd0, gap_cnt_next;
reg [12:0] skip_cnt_reg = 13'd0, skip_cnt_next;
reg send_ready_reg = 1'b0, send_ready_next;
reg [63:0] frames_dropped_reg = 64'd0, frames_dropped_next;
reg [63:0] frames_sent_reg = 64'd0;

// The frame being generated.
reg [16:0] f_len_reg = MIN_LEN, f_len_next;
reg [12:0] f_beats_reg = 13'd4, f_beats_next;
reg [12:0] beat_reg = 13'd0, beat_next;
reg [31:0] f_seq_reg = 32'd0, f_seq_next;
reg [63:0] f_ts_reg = 64'd0, f_ts_next;
reg [31:0] f_seed_reg = 32'd0, f_seed_next;
reg f_pattern_reg = 1'b0, f_pattern_next;
reg [7:0] f_channel_reg = 8'd0, f_channel_next;
reg [30:0] prbs_reg = 31'h7fffffff, prbs_next;
reg [31:0] cnt_word_reg = 32'd0, cnt_word_next;

// Stage A: one beat's bytes with the trailer's lanes zero.
reg a_valid_reg = 1'b0, a_valid_next;
reg [DATA_WIDTH-1:0] a_data_reg = {DATA_WIDTH{1'b0}}, a_data_next;
reg [KEEP_WIDTH-1:0] a_keep_reg = {KEEP_WIDTH{1'b0}}, a_keep_next;
reg a_last_reg = 1'b0, a_last_next;
reg a_first_reg = 1'b0, a_first_next;
reg [4:0] a_nbytes_reg = 5'd0, a_nbytes_next;
reg a_crc_here_reg = 1'b0, a_crc_here_next;
reg [3:0] a_crc_off_reg = 4'd0, a_crc_off_next;
reg a_crc_tail_reg = 1'b0, a_crc_tail_next;

// Stage B: the running CRC and the trailer bytes that spill into the last beat.
reg [31:0] crc_reg = 32'hffffffff;
reg [23:0] crc_spill_reg = 24'd0;

// FIFO interface.
wire [FIFO_COUNT_WIDTH-1:0] fifo_count;
wire fifo_s_ready;
wire [FIFO_WIDTH-1:0] fifo_m_data;

// Stage B writes stage A's beat into the FIFO when there is room. Under the drop policy a
// frame starts only with room reserved for all its beats, so this never holds it back.
wire ce = fifo_s_ready;
wire b_write = a_valid_reg && ce;

// The frame length a new frame would take, clamped to the legal range.
wire [16:0] len_in = frame_len < MIN_LEN ? MIN_LEN : (frame_len > MAX_LEN ? MAX_LEN : frame_len);
wire [12:0] beats_in = len_in[16:4] + {12'd0, len_in[3:0] != 4'd0};

// Where the trailer sits in the current frame: beat crc_beat, lane crc_off.
wire [16:0] crc_pos = f_len_reg - 17'd4;
wire [12:0] crc_beat = crc_pos[16:4];
wire [3:0] crc_off = crc_pos[3:0];
wire [3:0] last_bytes = f_len_reg[3:0];
wire [16:0] payload_len_short = f_len_reg - 17'd36;
wire [31:0] payload_len = {15'd0, payload_len_short};

// Payload sources for the current beat.
wire [DATA_WIDTH-1:0] prbs_data;
wire [30:0] prbs_state_after;
wire [DATA_WIDTH-1:0] cnt_data = {cnt_word_reg + 32'd3, cnt_word_reg + 32'd2,
                                  cnt_word_reg + 32'd1, cnt_word_reg};

frame_prbs31 #(
    .DATA_WIDTH(DATA_WIDTH)
)
prbs_inst (
    .state_in(prbs_reg),
    .data(prbs_data),
    .state_out(prbs_state_after)
);

// A one-shot request is taken while send_ready is high; the frame it starts carries send_seq.
wire start_oneshot = oneshot && send && send_ready_reg;
wire [31:0] seq_start = start_oneshot ? send_seq : seq_ctr_reg;

// The initial PRBS state of a frame with sequence number seq_start.
wire [31:0] prbs_mix = seed ^ (seq_start * PRBS_SEQ_MULT);
wire [30:0] prbs_init = prbs_mix[30:0] == 31'd0 ? 31'h7fffffff : prbs_mix[30:0];

// The FIFO's occupancy once this cycle's writes land and stage A is counted.
reg [31:0] pending;

reg gen_load;
reg slot_end;
reg start_periodic;
reg start_drop;
reg [DATA_WIDTH-1:0] beat_data;
reg [4:0] beat_nbytes;
integer i;

always @* begin
    state_next = state_reg;
    seq_ctr_next = seq_ctr_reg;
    fault_cnt_next = fault_cnt_reg;
    gap_cnt_next = gap_cnt_reg;
    skip_cnt_next = skip_cnt_reg;
    frames_dropped_next = frames_dropped_reg;

    f_len_next = f_len_reg;
    f_beats_next = f_beats_reg;
    beat_next = beat_reg;
    f_seq_next = f_seq_reg;
    f_ts_next = f_ts_reg;
    f_seed_next = f_seed_reg;
    f_pattern_next = f_pattern_reg;
    f_channel_next = f_channel_reg;
    prbs_next = prbs_reg;
    cnt_word_next = cnt_word_reg;

    a_valid_next = a_valid_reg && !ce;
    a_data_next = a_data_reg;
    a_keep_next = a_keep_reg;
    a_last_next = a_last_reg;
    a_first_next = a_first_reg;
    a_nbytes_next = a_nbytes_reg;
    a_crc_here_next = a_crc_here_reg;
    a_crc_off_next = a_crc_off_reg;
    a_crc_tail_next = a_crc_tail_reg;

    // Build the current beat of the current frame.
    beat_data = {DATA_WIDTH{1'b0}};
    if (beat_reg == 13'd0) begin
        beat_data = {payload_len, f_seq_reg, 8'd0, 7'd0, f_pattern_reg,
                     f_channel_reg, VERSION, MAGIC};
    end else if (beat_reg == 13'd1) begin
        beat_data = {32'd0, f_seed_reg, f_ts_reg};
    end else begin
        beat_data = f_pattern_reg ? prbs_data : cnt_data;
    end
    if (beat_reg < crc_beat) begin
        beat_nbytes = 5'd16;
    end else if (beat_reg == crc_beat) begin
        beat_nbytes = {1'b0, crc_off};
    end else begin
        beat_nbytes = 5'd0;
    end
    // Lanes past the covered bytes are zero, so stage B can OR the trailer in.
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (i >= beat_nbytes) begin
            beat_data[8*i +: 8] = 8'd0;
        end
    end

    gen_load = state_reg == STATE_FRAME && (!a_valid_reg || ce);
    slot_end = (gen_load && beat_reg == f_beats_reg - 13'd1)
        || (state_reg == STATE_SKIP && skip_cnt_reg == 13'd1);

    if (gen_load) begin
        a_valid_next = 1'b1;
        a_data_next = beat_data;
        a_keep_next = (beat_reg == f_beats_reg - 13'd1 && last_bytes != 4'd0)
            ? ({KEEP_WIDTH{1'b1}} >> (5'd16 - {1'b0, last_bytes})) : {KEEP_WIDTH{1'b1}};
        a_last_next = beat_reg == f_beats_reg - 13'd1;
        a_first_next = beat_reg == 13'd0;
        a_nbytes_next = beat_nbytes;
        a_crc_here_next = beat_reg == crc_beat;
        a_crc_off_next = crc_off;
        a_crc_tail_next = beat_reg == crc_beat + 13'd1;
        beat_next = beat_reg + 13'd1;
        if (beat_reg >= 13'd2) begin
            prbs_next = prbs_state_after;
            cnt_word_next = cnt_word_reg + 32'd4;
        end
    end

    if (state_reg == STATE_SKIP) begin
        skip_cnt_next = skip_cnt_reg - 13'd1;
    end

    // When the slot of a frame ends, go to the gap, or start the next frame at once.
    if (slot_end) begin
        state_next = STATE_IDLE;
        if (gap_cycles != 32'd0 && !oneshot) begin
            state_next = STATE_GAP;
            gap_cnt_next = gap_cycles;
        end
    end
    if (state_reg == STATE_GAP) begin
        gap_cnt_next = gap_cnt_reg - 32'd1;
        if (oneshot || !enable) begin
            state_next = STATE_IDLE;
        end
    end

    start_periodic = enable && !oneshot && (state_reg == STATE_IDLE
        || (state_reg == STATE_GAP && gap_cnt_reg <= 32'd1)
        || (slot_end && gap_cycles == 32'd0));

    // Room check for the drop policy: beats already in the FIFO, the one stage B writes now,
    // and the one stage A holds after this cycle.
    pending = {{32-FIFO_COUNT_WIDTH{1'b0}}, fifo_count} + {31'd0, b_write} + {31'd0, a_valid_next};
    start_drop = start_periodic && drop_policy && pending + {19'd0, beats_in} > FIFO_DEPTH;

    if (start_oneshot || start_periodic) begin
        f_len_next = len_in;
        f_beats_next = beats_in;
        beat_next = 13'd0;
        f_seq_next = seq_start;
        f_ts_next = timestamp;
        f_seed_next = seed;
        f_pattern_next = pattern;
        f_channel_next = channel;
        prbs_next = prbs_init;
        cnt_word_next = {seq_start[15:0], 16'd0};
        if (start_periodic) begin
            seq_ctr_next = seq_ctr_reg + 32'd1;
            if (FAULT_SEQ_REPEAT != 0) begin
                fault_cnt_next = fault_cnt_reg + 32'd1;
                if (fault_cnt_reg == FAULT_SEQ_REPEAT - 1) begin
                    fault_cnt_next = 32'd0;
                    seq_ctr_next = seq_ctr_reg;
                end
            end
        end
        if (start_drop) begin
            state_next = STATE_SKIP;
            skip_cnt_next = beats_in;
            frames_dropped_next = frames_dropped_reg + 64'd1;
        end else begin
            state_next = STATE_FRAME;
        end
    end

    send_ready_next = oneshot && state_next == STATE_IDLE;
end

// Stage B: CRC over the covered bytes, trailer inserted where the frame puts it.
wire [31:0] crc_in = a_first_reg ? 32'hffffffff : crc_reg;
wire [31:0] crc_out;
wire [31:0] crc_final = ~crc_out;
wire [DATA_WIDTH+31:0] crc_shifted = {{DATA_WIDTH{1'b0}}, crc_final} << {a_crc_off_reg, 3'b000};
wire [DATA_WIDTH-1:0] b_data = a_data_reg
    | (a_crc_here_reg ? crc_shifted[DATA_WIDTH-1:0] : {DATA_WIDTH{1'b0}})
    | (a_crc_tail_reg ? {{DATA_WIDTH-24{1'b0}}, crc_spill_reg} : {DATA_WIDTH{1'b0}});

frame_crc32 #(
    .DATA_WIDTH(DATA_WIDTH),
    .COUNT_WIDTH(5)
)
crc_inst (
    .state_in(crc_in),
    .data(a_data_reg),
    .nbytes(a_nbytes_reg),
    .state_out(crc_out)
);

// The top bit of the PRBS mix and the trailer bytes shifted past any beat are not needed.
wire [8:0] unused_bits = {prbs_mix[31], crc_shifted[DATA_WIDTH+24 +: 8]};

always @(posedge clk) begin
    state_reg <= state_next;
    seq_ctr_reg <= seq_ctr_next;
    fault_cnt_reg <= fault_cnt_next;
    gap_cnt_reg <= gap_cnt_next;
    skip_cnt_reg <= skip_cnt_next;
    send_ready_reg <= send_ready_next;
    frames_dropped_reg <= frames_dropped_next;

    f_len_reg <= f_len_next;
    f_beats_reg <= f_beats_next;
    beat_reg <= beat_next;
    f_seq_reg <= f_seq_next;
    f_ts_reg <= f_ts_next;
    f_seed_reg <= f_seed_next;
    f_pattern_reg <= f_pattern_next;
    f_channel_reg <= f_channel_next;
    prbs_reg <= prbs_next;
    cnt_word_reg <= cnt_word_next;

    a_valid_reg <= a_valid_next;
    a_data_reg <= a_data_next;
    a_keep_reg <= a_keep_next;
    a_last_reg <= a_last_next;
    a_first_reg <= a_first_next;
    a_nbytes_reg <= a_nbytes_next;
    a_crc_here_reg <= a_crc_here_next;
    a_crc_off_reg <= a_crc_off_next;
    a_crc_tail_reg <= a_crc_tail_next;

    if (b_write) begin
        crc_reg <= crc_out;
        if (a_crc_here_reg) begin
            // The trailer bytes that did not fit in this beat move to lane 0 of the next.
            crc_spill_reg <= crc_shifted[DATA_WIDTH +: 24];
        end
    end

    if (m_axis_tvalid && m_axis_tready && m_axis_tlast) begin
        frames_sent_reg <= frames_sent_reg + 64'd1;
    end

    if (rst) begin
        state_reg <= STATE_IDLE;
        seq_ctr_reg <= 32'd0;
        fault_cnt_reg <= 32'd0;
        gap_cnt_reg <= 32'd0;
        skip_cnt_reg <= 13'd0;
        send_ready_reg <= 1'b0;
        frames_dropped_reg <= 64'd0;
        frames_sent_reg <= 64'd0;
        beat_reg <= 13'd0;
        a_valid_reg <= 1'b0;
        crc_reg <= 32'hffffffff;
    end
end

frame_source_fifo #(
    .WIDTH(FIFO_WIDTH),
    .DEPTH(FIFO_DEPTH),
    .COUNT_WIDTH(FIFO_COUNT_WIDTH)
)
fifo_inst (
    .clk(clk),
    .rst(rst),
    .s_data({a_last_reg, a_keep_reg, b_data}),
    .s_valid(a_valid_reg),
    .s_ready(fifo_s_ready),
    .m_data(fifo_m_data),
    .m_valid(m_axis_tvalid),
    .m_ready(m_axis_tready),
    .count(fifo_count)
);

assign m_axis_tdata = fifo_m_data[DATA_WIDTH-1:0];
assign m_axis_tkeep = fifo_m_data[DATA_WIDTH +: KEEP_WIDTH];
assign m_axis_tlast = fifo_m_data[DATA_WIDTH+KEEP_WIDTH];
assign frames_sent = frames_sent_reg;
assign frames_dropped = frames_dropped_reg;
assign send_ready = send_ready_reg;

endmodule

`resetall
