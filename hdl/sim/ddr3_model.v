/*
 * Simulation-only model of a DDR3 SDRAM behind a Xilinx MIG controller, seen from its AXI4
 * slave port (the user side, ui_clk domain).
 *
 * Storage lives in C++ (sim/cpp/ddr3_mem.cpp) behind DPI-C, in sparse 64 KiB pages allocated
 * on first write, so the full address space (2 GiB by default) costs only what a test touches.
 * Each instance opens storage of its own; test harnesses reach it without bus cycles through
 * the backdoor functions that docs/ddr3-model.md lists. Unwritten memory reads as zero.
 *
 * Timing (all in clk cycles, i.e. MIG ui_clk cycles):
 * - Bursts are served one at a time, in the order the scheduler picks them: reads and writes
 *   alternate when both are waiting, and a refresh that is due goes first.
 * - Each beat (DATA_WIDTH bits = one BL8 burst of the 64-bit DDR3 bus at 4:1) is one column
 *   command, at most one per cycle. Its bank and row come from the address, mapped
 *   row-bank-column as MIG's default: byte = {row, bank, column, BUS_BYTES_LOG2 bits}.
 * - Open-page policy: a row stays open until a conflict or a refresh closes it.
 *     row hit       the column command waits for nothing but the bank's tRCD;
 *     closed bank   ACT now, column command T_RCD later;
 *     row conflict  PRE once T_RAS after the ACT (and T_WR after the last write) have passed,
 *                   ACT T_RP later, column command T_RCD after that.
 *   Commands to other banks are not overlapped with a miss (no look-ahead), so random
 *   traffic is somewhat slower than on MIG; a stream of row hits moves one beat per cycle.
 * - Read data leaves CL + CTRL_LAT cycles after its column command; CTRL_LAT stands for MIG's
 *   AXI shim, controller queue and PHY.
 * - Refresh: every T_REFI cycles a refresh becomes due; at the next burst boundary all open
 *   banks are precharged (after their T_RAS/T_WR), T_RP later REF occupies the device for
 *   T_RFC cycles, and every bank is closed afterwards.
 * - Fixed overhead of the model itself: a read burst whose AR handshake happens at edge N
 *   issues its first column command at edge N+2 when nothing is in the way, so a row hit's
 *   first data beat is valid after edge N + 3 + CL + CTRL_LAT; the first beat of a burst
 *   behind a busy scheduler follows the previous burst's last beat by one idle cycle.
 * - Not modelled: tRRD, tFAW, tWTR, tRTP, tCCD beyond one column per cycle, ZQ calibration,
 *   read/write reordering.
 *
 * Protocol: INCR bursts of full-width beats only (what MIG's AXI shim sees from SmartConnect
 * and from axi_mm_path); anything else stops the simulation with $error, as does a WLAST that
 * disagrees with AWLEN. Responses are always OKAY. R data returns in AR order, B in AW order.
 *
 * Default timing: DDR3-1600 (tCK 1.25 ns, 11-11-11) at MIG 4:1, ui_clk 200 MHz (5 ns):
 *   CL    = 11 tCK = 13.75 ns -> 2.75 -> 3 ui cycles
 *   T_RCD = 13.75 ns -> 3,  T_RP = 13.75 ns -> 3,  T_RAS = 35 ns -> 7
 *   T_WR  = CWL 8 tCK + BL8/2 4 tCK + tWR 15 ns (12 tCK) = 24 tCK = 30 ns -> 6
 *   T_RFC = 160 ns (2 Gb devices: 2 GiB as 8 x8 chips) -> 32
 *   T_REFI = 7.8 us -> 1560
 *   CTRL_LAT = 20 (100 ns): an estimate of MIG 7-series AXI read overhead, not a measured
 *   figure of the reference board; override it when a measurement is available.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddr3_model #
(
    // Width of the AXI data bus in bits (64, 128, 256 or 512)
    parameter DATA_WIDTH = 512,
    // Width of the AXI byte address in bits; the memory holds 2**ADDR_WIDTH bytes
    parameter ADDR_WIDTH = 31,
    // Width of the AXI ID
    parameter ID_WIDTH = 5,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // log2 of the DDR3 bus width in bytes (3: a 64-bit bus); one column holds this many bytes
    parameter BUS_BYTES_LOG2 = 3,
    // Column address bits of one device (10: 1 K columns, an 8 KiB row over a 64-bit bus)
    parameter COL_BITS = 10,
    // Bank address bits (3: 8 banks)
    parameter BANK_BITS = 3,
    // CAS latency: read column command to data, in clk cycles
    parameter CL = 3,
    // ACT to column command delay, in clk cycles
    parameter T_RCD = 3,
    // PRE to ACT delay (precharge period), in clk cycles
    parameter T_RP = 3,
    // Minimum ACT to PRE time of one bank, in clk cycles
    parameter T_RAS = 7,
    // Last write column command to PRE of the same bank, in clk cycles
    parameter T_WR = 6,
    // Refresh cycle time (REF to next ACT), in clk cycles
    parameter T_RFC = 32,
    // Average refresh interval, in clk cycles
    parameter T_REFI = 1560,
    // Fixed read latency of controller, AXI shim and PHY on top of CL, in clk cycles
    parameter CTRL_LAT = 20,
    // Entries of the AW, AR and B queues (bursts accepted ahead of service)
    parameter QUEUE_DEPTH = 8,
    // Entries of the write data buffer (beats accepted ahead of service)
    parameter W_DEPTH = 64,
    // Entries of the read data pipeline (beats issued but not yet returned)
    parameter R_DEPTH = 64
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI4 slave
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
    input  wire [ID_WIDTH-1:0]    s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_araddr,
    input  wire [7:0]             s_axi_arlen,
    input  wire [2:0]             s_axi_arsize,
    input  wire [1:0]             s_axi_arburst,
    input  wire                   s_axi_arlock,
    input  wire [3:0]             s_axi_arcache,
    input  wire [2:0]             s_axi_arprot,
    input  wire                   s_axi_arvalid,
    output wire                   s_axi_arready,
    output wire [ID_WIDTH-1:0]    s_axi_rid,
    output wire [DATA_WIDTH-1:0]  s_axi_rdata,
    output wire [1:0]             s_axi_rresp,
    output wire                   s_axi_rlast,
    output wire                   s_axi_rvalid,
    input  wire                   s_axi_rready
);

localparam DATA_BYTES = DATA_WIDTH/8;
localparam [2:0] FULL_SIZE = DATA_WIDTH == 64 ? 3'd3 : DATA_WIDTH == 128 ? 3'd4 :
    DATA_WIDTH == 256 ? 3'd5 : 3'd6;
localparam ROW_BITS = ADDR_WIDTH - BUS_BYTES_LOG2 - COL_BITS - BANK_BITS;
localparam BANKS = 2**BANK_BITS;
localparam BANK_LSB = BUS_BYTES_LOG2 + COL_BITS;
localparam ROW_LSB = BANK_LSB + BANK_BITS;
// Widths of the queue indices (one extra bit is never needed: counts are kept separately).
localparam QW = $clog2(QUEUE_DEPTH);
localparam WW = $clog2(W_DEPTH);
localparam RW = $clog2(R_DEPTH);

// AXI burst types and response codes
localparam [1:0]
    BURST_INCR = 2'b01,
    RESP_OKAY = 2'b00;

// scheduler states
localparam [0:0]
    STATE_IDLE = 1'd0,
    STATE_BURST = 1'd1;

// check configuration
initial begin
    if (DATA_WIDTH != 64 && DATA_WIDTH != 128 && DATA_WIDTH != 256 && DATA_WIDTH != 512) begin
        $error("Error: DATA_WIDTH must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end

    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end

    if (ADDR_WIDTH > 40 || ROW_BITS < 1) begin
        $error("Error: ADDR_WIDTH must leave at least one row bit and be at most 40 (instance %m)");
        $finish;
    end

    if (CL < 1 || T_RCD < 1 || T_RP < 1 || T_RAS < 1 || T_WR < 0 || T_RFC < 1 || CTRL_LAT < 0) begin
        $error("Error: timing parameters must be positive (instance %m)");
        $finish;
    end

    if (T_REFI <= T_RFC + T_RP) begin
        $error("Error: T_REFI must exceed T_RFC + T_RP or the device only refreshes (instance %m)");
        $finish;
    end

    if (2**QW != QUEUE_DEPTH || 2**WW != W_DEPTH || 2**RW != R_DEPTH || QW < 1 || WW < 1 || RW < 1) begin
        $error("Error: QUEUE_DEPTH, W_DEPTH and R_DEPTH must be powers of two, at least 2 (instance %m)");
        $finish;
    end
end

/*
 * Storage (sim/cpp/ddr3_mem.cpp). Data travels as 512 bits and strobes as 64 bits whatever
 * DATA_WIDTH is; `nbytes` says how many of them count.
 */
import "DPI-C" context function chandle ddr3_model_open(input longint unsigned size_bytes);
import "DPI-C" function void ddr3_model_close(input chandle mem);
import "DPI-C" function void ddr3_model_read(input chandle mem, input longint unsigned addr,
    input int unsigned nbytes, output bit [511:0] data);
import "DPI-C" function void ddr3_model_write(input chandle mem, input longint unsigned addr,
    input int unsigned nbytes, input bit [511:0] data, input longint unsigned strb);

chandle mem_handle;
initial mem_handle = ddr3_model_open(64'd1 << ADDR_WIDTH);
final ddr3_model_close(mem_handle);

/*
 * Queues, all owned by the single process below.
 */
reg [ID_WIDTH-1:0]   aw_q_id[QUEUE_DEPTH-1:0];
reg [ADDR_WIDTH-1:0] aw_q_addr[QUEUE_DEPTH-1:0];
reg [7:0]            aw_q_len[QUEUE_DEPTH-1:0];
reg [QW-1:0] aw_q_rd = 0, aw_q_wr = 0;
reg [QW:0]   aw_q_count = 0;

reg [ID_WIDTH-1:0]   ar_q_id[QUEUE_DEPTH-1:0];
reg [ADDR_WIDTH-1:0] ar_q_addr[QUEUE_DEPTH-1:0];
reg [7:0]            ar_q_len[QUEUE_DEPTH-1:0];
reg [QW-1:0] ar_q_rd = 0, ar_q_wr = 0;
reg [QW:0]   ar_q_count = 0;

reg [ID_WIDTH-1:0]   b_q_id[QUEUE_DEPTH-1:0];
reg [QW-1:0] b_q_rd = 0, b_q_wr = 0;
reg [QW:0]   b_q_count = 0;

reg [DATA_WIDTH-1:0] w_q_data[W_DEPTH-1:0];
reg [STRB_WIDTH-1:0] w_q_strb[W_DEPTH-1:0];
reg                  w_q_last[W_DEPTH-1:0];
reg [WW-1:0] w_q_rd = 0, w_q_wr = 0;
reg [WW:0]   w_q_count = 0;

reg [DATA_WIDTH-1:0] r_q_data[R_DEPTH-1:0];
reg [ID_WIDTH-1:0]   r_q_id[R_DEPTH-1:0];
reg                  r_q_last[R_DEPTH-1:0];
reg [63:0]           r_q_due[R_DEPTH-1:0];
reg [RW-1:0] r_q_rd = 0, r_q_wr = 0;
reg [RW:0]   r_q_count = 0;

/*
 * Device state
 */
reg [63:0]         now = 64'd0;          // clk cycles since reset
reg [63:0]         ref_due = T_REFI;     // when the next refresh becomes due
reg                ref_pending = 1'b0;
reg [63:0]         busy_until = 64'd0;   // end of the current refresh
reg [63:0]         refresh_count = 64'd0;
reg [BANKS-1:0]    bank_open = {BANKS{1'b0}};
reg [ROW_BITS-1:0] bank_row[BANKS-1:0];
reg [63:0]         bank_col_ok[BANKS-1:0];  // earliest column command (ACT + T_RCD)
reg [63:0]         bank_pre_ok[BANKS-1:0];  // earliest PRE (ACT + T_RAS, write + T_WR)

/*
 * Scheduler: the burst in service
 */
reg [0:0]            state = STATE_IDLE;
reg                  last_was_read = 1'b0;
reg                  cur_write = 1'b0;
reg [ID_WIDTH-1:0]   cur_id = {ID_WIDTH{1'b0}};
reg [ADDR_WIDTH-1:0] cur_addr = {ADDR_WIDTH{1'b0}};
reg [8:0]            cur_left = 9'd0;     // beats still to issue
reg                  cur_planned = 1'b0;  // the next beat's bank commands are scheduled
reg [63:0]           cur_col_at = 64'd0;  // ...and its column command may issue from here

/*
 * Registered outputs
 */
reg                  s_axi_awready_reg = 1'b0;
reg                  s_axi_wready_reg = 1'b0;
reg                  s_axi_arready_reg = 1'b0;
reg [ID_WIDTH-1:0]   s_axi_bid_reg = {ID_WIDTH{1'b0}};
reg                  s_axi_bvalid_reg = 1'b0;
reg [ID_WIDTH-1:0]   s_axi_rid_reg = {ID_WIDTH{1'b0}};
reg [DATA_WIDTH-1:0] s_axi_rdata_reg = {DATA_WIDTH{1'b0}};
reg                  s_axi_rlast_reg = 1'b0;
reg                  s_axi_rvalid_reg = 1'b0;

assign s_axi_awready = s_axi_awready_reg;
assign s_axi_wready = s_axi_wready_reg;
assign s_axi_arready = s_axi_arready_reg;
assign s_axi_bid = s_axi_bid_reg;
assign s_axi_bresp = RESP_OKAY;
assign s_axi_bvalid = s_axi_bvalid_reg;
assign s_axi_rid = s_axi_rid_reg;
assign s_axi_rdata = s_axi_rdata_reg;
assign s_axi_rresp = RESP_OKAY;
assign s_axi_rlast = s_axi_rlast_reg;
assign s_axi_rvalid = s_axi_rvalid_reg;

// Attributes that the model accepts and ignores: lock, cache and protection carry no meaning
// for plain memory.
wire unused = &{1'b0, s_axi_awlock, s_axi_awcache, s_axi_awprot, s_axi_arlock, s_axi_arcache,
    s_axi_arprot, 1'b0};

function [63:0] max64(input [63:0] a, input [63:0] b);
    max64 = a > b ? a : b;
endfunction

/*
 * One process owns every queue and the device state; it works on them with blocking
 * assignments in program order, like a behavioural model in C, and drives the outputs with
 * non-blocking assignments so that other processes see them change only after the edge.
 */
/* verilator lint_off BLKSEQ */
// Waiver: a simulation-only behavioural model; the internal state is private to this one
// process, so blocking assignments cannot race with another process.
always @(posedge clk) begin : model
    integer i;
    reg aw_fire, w_fire, ar_fire, b_fire, r_fire;
    reg b_valid_next, r_valid_next;
    reg any_open;
    reg can_rd, can_wr;
    reg [BANK_BITS-1:0] bank;
    reg [ROW_BITS-1:0] row;
    reg [63:0] t_act, t_free;
    reg [511:0] rd_data;
    reg [511:0] wr_data;
    reg [63:0] wr_strb;

    aw_fire = s_axi_awvalid && s_axi_awready_reg;
    w_fire = s_axi_wvalid && s_axi_wready_reg;
    ar_fire = s_axi_arvalid && s_axi_arready_reg;
    b_fire = s_axi_bvalid_reg && s_axi_bready;
    r_fire = s_axi_rvalid_reg && s_axi_rready;

    if (rst) begin
        aw_q_rd = 0; aw_q_wr = 0; aw_q_count = 0;
        ar_q_rd = 0; ar_q_wr = 0; ar_q_count = 0;
        b_q_rd = 0; b_q_wr = 0; b_q_count = 0;
        w_q_rd = 0; w_q_wr = 0; w_q_count = 0;
        r_q_rd = 0; r_q_wr = 0; r_q_count = 0;
        now = 64'd0;
        ref_due = T_REFI;
        ref_pending = 1'b0;
        busy_until = 64'd0;
        bank_open = {BANKS{1'b0}};
        state = STATE_IDLE;
        last_was_read = 1'b0;
        cur_planned = 1'b0;
        s_axi_awready_reg <= 1'b0;
        s_axi_wready_reg <= 1'b0;
        s_axi_arready_reg <= 1'b0;
        s_axi_bvalid_reg <= 1'b0;
        s_axi_rvalid_reg <= 1'b0;
    end else begin
        /*
         * Accept what the handshakes at this edge delivered.
         */
        if (aw_fire) begin
            if (s_axi_awburst != BURST_INCR || s_axi_awsize != FULL_SIZE) begin
                $error("ddr3_model %m: write burst at %h has burst type %0d and size %0d; only INCR (1) of full width (size %0d) is supported",
                    s_axi_awaddr, s_axi_awburst, s_axi_awsize, FULL_SIZE);
            end
            aw_q_id[aw_q_wr] = s_axi_awid;
            aw_q_addr[aw_q_wr] = s_axi_awaddr;
            aw_q_len[aw_q_wr] = s_axi_awlen;
            aw_q_wr = aw_q_wr + 1;
            aw_q_count = aw_q_count + 1;
        end
        if (ar_fire) begin
            if (s_axi_arburst != BURST_INCR || s_axi_arsize != FULL_SIZE) begin
                $error("ddr3_model %m: read burst at %h has burst type %0d and size %0d; only INCR (1) of full width (size %0d) is supported",
                    s_axi_araddr, s_axi_arburst, s_axi_arsize, FULL_SIZE);
            end
            ar_q_id[ar_q_wr] = s_axi_arid;
            ar_q_addr[ar_q_wr] = s_axi_araddr;
            ar_q_len[ar_q_wr] = s_axi_arlen;
            ar_q_wr = ar_q_wr + 1;
            ar_q_count = ar_q_count + 1;
        end
        if (w_fire) begin
            w_q_data[w_q_wr] = s_axi_wdata;
            w_q_strb[w_q_wr] = s_axi_wstrb;
            w_q_last[w_q_wr] = s_axi_wlast;
            w_q_wr = w_q_wr + 1;
            w_q_count = w_q_count + 1;
        end

        /*
         * Refresh timer
         */
        if (now >= ref_due) begin
            ref_pending = 1'b1;
            ref_due = ref_due + T_REFI;
        end

        /*
         * Scheduler
         */
        if (state == STATE_IDLE) begin
            if (now >= busy_until) begin
                if (ref_pending) begin
                    // Precharge all (once each open bank allows it), then REF.
                    t_free = now;
                    any_open = 1'b0;
                    for (i = 0; i < BANKS; i = i + 1) begin
                        if (bank_open[i]) begin
                            any_open = 1'b1;
                            t_free = max64(t_free, bank_pre_ok[i]);
                        end
                    end
                    if (any_open) begin
                        t_free = t_free + T_RP;
                    end
                    busy_until = t_free + T_RFC;
                    bank_open = {BANKS{1'b0}};
                    ref_pending = 1'b0;
                    refresh_count = refresh_count + 1;
                end else begin
                    can_rd = ar_q_count != 0;
                    can_wr = aw_q_count != 0 && w_q_count != 0 && b_q_count < QUEUE_DEPTH;
                    if (can_rd && (!can_wr || !last_was_read)) begin
                        cur_write = 1'b0;
                        cur_id = ar_q_id[ar_q_rd];
                        cur_addr = ar_q_addr[ar_q_rd];
                        cur_left = {1'b0, ar_q_len[ar_q_rd]} + 9'd1;
                        ar_q_rd = ar_q_rd + 1;
                        ar_q_count = ar_q_count - 1;
                        last_was_read = 1'b1;
                        cur_planned = 1'b0;
                        state = STATE_BURST;
                    end else if (can_wr) begin
                        cur_write = 1'b1;
                        cur_id = aw_q_id[aw_q_rd];
                        cur_addr = aw_q_addr[aw_q_rd];
                        cur_left = {1'b0, aw_q_len[aw_q_rd]} + 9'd1;
                        aw_q_rd = aw_q_rd + 1;
                        aw_q_count = aw_q_count - 1;
                        last_was_read = 1'b0;
                        cur_planned = 1'b0;
                        state = STATE_BURST;
                    end
                end
            end
        end else begin
            bank = cur_addr[BANK_LSB +: BANK_BITS];
            row = cur_addr[ROW_LSB +: ROW_BITS];
            if (!cur_planned) begin
                if (bank_open[bank] && bank_row[bank] == row) begin
                    // Row hit.
                    cur_col_at = max64(now, bank_col_ok[bank]);
                end else begin
                    if (bank_open[bank]) begin
                        // Row conflict: precharge first.
                        t_act = max64(now, bank_pre_ok[bank]) + T_RP;
                    end else begin
                        t_act = now;
                    end
                    cur_col_at = t_act + T_RCD;
                    bank_open[bank] = 1'b1;
                    bank_row[bank] = row;
                    bank_col_ok[bank] = cur_col_at;
                    bank_pre_ok[bank] = t_act + T_RAS;
                end
                cur_planned = 1'b1;
            end
            if (now >= cur_col_at) begin
                if (cur_write && w_q_count != 0) begin
                    if (w_q_last[w_q_rd] != (cur_left == 9'd1)) begin
                        $error("ddr3_model %m: WLAST is %0d on a beat with %0d beats left in the burst",
                            w_q_last[w_q_rd], cur_left);
                    end
                    wr_data = 512'd0;
                    wr_data[DATA_WIDTH-1:0] = w_q_data[w_q_rd];
                    wr_strb = 64'd0;
                    wr_strb[STRB_WIDTH-1:0] = w_q_strb[w_q_rd];
                    ddr3_model_write(mem_handle, {{64-ADDR_WIDTH{1'b0}}, cur_addr}, DATA_BYTES,
                        wr_data, wr_strb);
                    w_q_rd = w_q_rd + 1;
                    w_q_count = w_q_count - 1;
                    bank_pre_ok[bank] = max64(bank_pre_ok[bank], now + T_WR);
                    cur_planned = 1'b0;
                end else if (!cur_write && r_q_count < R_DEPTH) begin
                    ddr3_model_read(mem_handle, {{64-ADDR_WIDTH{1'b0}}, cur_addr}, DATA_BYTES,
                        rd_data);
                    r_q_data[r_q_wr] = rd_data[DATA_WIDTH-1:0];
                    r_q_id[r_q_wr] = cur_id;
                    r_q_last[r_q_wr] = cur_left == 9'd1;
                    r_q_due[r_q_wr] = now + CL + CTRL_LAT;
                    r_q_wr = r_q_wr + 1;
                    r_q_count = r_q_count + 1;
                    cur_planned = 1'b0;
                end
                if (!cur_planned) begin
                    cur_addr = cur_addr + DATA_BYTES;
                    cur_left = cur_left - 9'd1;
                    if (cur_left == 9'd0) begin
                        if (cur_write) begin
                            b_q_id[b_q_wr] = cur_id;
                            b_q_wr = b_q_wr + 1;
                            b_q_count = b_q_count + 1;
                        end
                        state = STATE_IDLE;
                    end
                end
            end
        end

        /*
         * Output registers
         */
        b_valid_next = s_axi_bvalid_reg && !b_fire;
        if (!b_valid_next && b_q_count != 0) begin
            s_axi_bid_reg <= b_q_id[b_q_rd];
            b_q_rd = b_q_rd + 1;
            b_q_count = b_q_count - 1;
            b_valid_next = 1'b1;
        end
        s_axi_bvalid_reg <= b_valid_next;

        r_valid_next = s_axi_rvalid_reg && !r_fire;
        if (!r_valid_next && r_q_count != 0 && now >= r_q_due[r_q_rd]) begin
            s_axi_rid_reg <= r_q_id[r_q_rd];
            s_axi_rdata_reg <= r_q_data[r_q_rd];
            s_axi_rlast_reg <= r_q_last[r_q_rd];
            r_q_rd = r_q_rd + 1;
            r_q_count = r_q_count - 1;
            r_valid_next = 1'b1;
        end
        s_axi_rvalid_reg <= r_valid_next;

        s_axi_awready_reg <= aw_q_count < QUEUE_DEPTH;
        s_axi_arready_reg <= ar_q_count < QUEUE_DEPTH;
        s_axi_wready_reg <= w_q_count < W_DEPTH;

        now = now + 64'd1;
    end
end
/* verilator lint_on BLKSEQ */

endmodule

`resetall
