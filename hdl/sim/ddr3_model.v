/*
 * Simulation-only model of a DDR3 SDRAM behind a Xilinx MIG 7-series controller, seen from
 * its AXI4 slave port (the user side, ui_clk domain).
 *
 * Storage lives in C++ (sim/cpp/ddr3_mem.cpp) behind DPI-C, in sparse 64 KiB pages allocated
 * on first write, so the full address space (2 GiB by default) costs only what a test touches.
 * Each instance opens storage of its own; test harnesses reach it without bus cycles through
 * the backdoor functions that docs/ddr3-model.md lists. Unwritten memory reads as zero.
 *
 * Timing (all in clk cycles, i.e. MIG ui_clk cycles):
 * - A read context and a write context each hold one burst, taken from the AR and AW queues in
 *   order; a context that finishes a burst takes the next one in the following cycle. Every
 *   beat (DATA_WIDTH bits = one BL8 burst of the 64-bit DDR3 bus at 4:1) is one column
 *   command, at most one per cycle, and an arbiter picks which context issues the next one.
 * - Read/write arbitration follows the AXI shim of MIG 7-series v4.x
 *   (mig_7series_v4_2_axi_mc_cmd_arbiter.v, the RD_PRI_REG branch, L159-216; the v4.0 file has
 *   the same logic), chosen at run time on the arb_algorithm port (MIG fixes it when the core is
 *   generated; a port lets one build answer what-if questions):
 *     RD_PRI_REG (0, MIG's default, arbiter L76) - the direction holding the command slot keeps
 *       it while it has bursts (a transaction "present": the burst being issued or one queued),
 *       and the other direction gets it as soon as the holder has none (the switch needs only
 *       the other side's address, not its data: L213-215). The holder yields at a burst
 *       boundary once it has issued HOLD_BEATS beats (the starve counter starts at 2 and ends
 *       the hold at 256, checked when a burst's last command is accepted, L168-205: 256
 *       commands in a simulation of that RTL), or at a boundary when the other side's pending
 *       burst has a non-zero AxQOS (L197-205; QoS values are not compared), or at any time
 *       after HOLD_IDLE cycles in which it had a burst but no beat ready (the wait limit,
 *       L172-176: write data not yet arrived, or no read credit).
 *     ROUND_ROBIN (1, L148-158) - no hold: when both directions have a beat ready they
 *       alternate beat by beat; otherwise the one that is ready goes.
 *     TDM (2, L137-147) - the slot belongs to reads and writes on alternate cycles, whatever
 *       is waiting; a direction cannot use the other's cycles.
 *   A write beat is ready when its data is at the shim (W_DEPTH: MIG takes a W beat only in
 *   the cycle its command is accepted, w_channel.v L142-199, behind a one-entry skid), a read
 *   beat while fewer than READ_CREDITS read beats are between their column command and their R
 *   handshake (r_channel.v L124-131: the read data and transaction FIFOs, 32 and 30 deep, stop
 *   new commands when almost full). A refresh that is due stops both contexts from taking new
 *   bursts and goes once both are between bursts.
 * - Bank and row come from the address, mapped row-bank-column as MIG's default:
 *   byte = {row, bank, column, BUS_BYTES_LOG2 bits}. Open-page policy: a row stays open until a
 *   conflict or a refresh closes it.
 *     row hit       the column command waits for nothing but the bank's tRCD;
 *     closed bank   ACT, column command T_RCD later;
 *     row conflict  PRE once T_RAS after the ACT, T_WR after the last write and T_RTP after
 *                   the last read of the bank have passed, ACT T_RP later, column T_RCD later.
 *   The ACT of a burst's row may go as early as the cycle after the burst's address handshake,
 *   as MIG's bank machines open rows ahead of their column commands, but never closer than
 *   T_RRD to the previous ACT, nor within T_FAW of the fourth ACT before it, nor before the
 *   end of a refresh. So a miss behind other traffic can cost nothing, and an idle one costs
 *   what the list says.
 * - Bus turnaround: a read column command comes at least T_WTR after the last write column
 *   command and a write at least T_RTW after the last read (one rank, so always the same rank).
 * - Read data leaves CL + CTRL_LAT cycles after its column command; CTRL_LAT stands for MIG's
 *   AXI shim, controller queue and PHY.
 * - Refresh: every T_REFI cycles a refresh becomes due; all open banks are precharged (after
 *   their T_RAS/T_WR/T_RTP), T_RP later REF occupies the device for T_RFC cycles, and every
 *   bank is closed afterwards.
 * - Fixed overhead of the model itself: a read burst whose AR handshake is at edge N issues
 *   its first column command at edge N+1 when nothing is in the way, so a row hit's first
 *   beat is valid after edge N+1+CL+CTRL_LAT (R handshake at N+2+CL+CTRL_LAT at the soonest);
 *   a burst that follows one of the same direction starts one idle cycle after its last beat.
 * - Not modelled: tCCD beyond one column per cycle, ZQ calibration, reordering of requests
 *   within a direction (MIG's bank machines may serve reads out of order; the model keeps AR
 *   order), command slots within a ui cycle (MIG's own tRTP counter comes to 3 because of
 *   them), and the limit that MIG's bank machines put on how far ahead rows are opened (the
 *   model looks as far ahead as its queues, a little optimistic for random traffic).
 *
 * Converting DDR3 timing to ui cycles: one ui cycle is 4 tCK (4:1), and MIG places at most one
 * row and one column command in each ui cycle, so a spacing of n tCK between two commands is
 * met from ceil(n/4) ui cycles on, as MIG's rank and bank machines count it.
 *
 * Protocol: INCR bursts of full-width beats only (what MIG's AXI shim sees from SmartConnect
 * and from axi_mm_path); anything else stops the simulation with $error, as does a WLAST that
 * disagrees with AWLEN. Responses are always OKAY. R data returns in AR order, B in AW order;
 * a read and a write may be served in either order (AXI orders neither against the other).
 *
 * Default timing: DDR3-1600K (tCK 1.25 ns, 11-11-11, CWL 8), 2 Gb x8 devices (1 KiB page),
 * at MIG 4:1, ui_clk 200 MHz (5 ns):
 *   CL     = 11 tCK = 13.75 ns -> 2.75 -> 3 ui cycles
 *   T_RCD  = 13.75 ns -> 3,  T_RP = 13.75 ns -> 3,  T_RAS = 35 ns -> 7
 *   T_WR   = CWL 8 tCK + BL8/2 4 tCK + tWR 15 ns (12 tCK) = 24 tCK = 30 ns -> 6
 *   T_RTP  = tRTP max(4 tCK, 7.5 ns) = 6 tCK -> 2
 *   T_WTR  = CWL 8 + BL8/2 4 + tWTR max(4 tCK, 7.5 ns) 6 = 18 tCK (write to read command) -> 5
 *   T_RTW  = CL 11 + BL8/2 4 + 2 tCK bus turnaround - CWL 8 = 9 tCK (JEDEC RL + tCCD + 2 - WL,
 *            AL 0; MIG's DQRD2DQWR_DLY default is the 2 tCK) -> 3
 *   T_RRD  = max(4 tCK, 6 ns) = 5 tCK -> 2 (1 KiB page)
 *   T_FAW  = 30 ns = 24 tCK -> 6 (1 KiB page). The fifth ACT is T_RRD after the fourth, i.e.
 *            at least 4 T_RRD = 8 after the first, so the window binds only when it exceeds
 *            4 T_RRD (not for DDR3-1600 at 4:1, even with 2 KiB pages: 40 ns -> 8)
 *   T_RFC  = 160 ns (2 Gb devices: 2 GiB as 8 x8 chips) -> 32
 *   T_REFI = 7.8 us -> 1560
 *   HOLD_BEATS = 256: MIG v4.x's starve counter starts at 2 and ends a hold when it reaches
 *                256, counting one per command at 4:1 (the switch cycle's command is not
 *                counted), so a saturated direction issues 256 commands and then ends its burst;
 *   HOLD_IDLE = 16: MIG's wait limit (bit 4 of a counter of idle command slots);
 *   READ_CREDITS = 30: the shim's transaction FIFO (30 deep) less nothing: its almost-full
 *                flag stops read commands with about 29-30 outstanding;
 *   W_DEPTH = 2: the shim's W skid and the beat taken with the command.
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
    // Last read column command to PRE of the same bank (tRTP), in clk cycles
    parameter T_RTP = 2,
    // Write column command to read column command, same rank (CWL + BL/2 + tWTR), in clk cycles
    parameter T_WTR = 5,
    // Read column command to write column command (CL + BL/2 + 2 tCK - CWL), in clk cycles
    parameter T_RTW = 3,
    // ACT to ACT of different banks (tRRD), in clk cycles
    parameter T_RRD = 2,
    // Window in which at most four ACTs may go (tFAW), in clk cycles
    parameter T_FAW = 6,
    // Fixed read latency of controller, AXI shim and PHY on top of CL, in clk cycles
    parameter CTRL_LAT = 20,
    // Beats after which the direction holding the command slot yields at a burst boundary
    // (RD_PRI_REG's starve limit)
    parameter HOLD_BEATS = 256,
    // Cycles without a ready beat after which the direction holding the slot yields
    parameter HOLD_IDLE = 16,
    // Entries of the AW, AR and B queues (bursts accepted ahead of service)
    parameter QUEUE_DEPTH = 8,
    // Entries of the write data buffer (beats accepted ahead of service; a power of two)
    parameter W_DEPTH = 2,
    // Entries of the read data pipeline (beats issued but not yet returned; a power of two)
    parameter R_DEPTH = 32,
    // Read beats that may be between their column command and their R handshake before no
    // more read column commands are issued (the shim's read FIFOs), at most R_DEPTH
    parameter READ_CREDITS = 30
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * Read/write arbitration scheme: 0 RD_PRI_REG, 1 ROUND_ROBIN, 2 TDM (held constant)
     */
    input  wire [1:0]             arb_algorithm,

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
    input  wire [3:0]             s_axi_awqos,
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
    input  wire [3:0]             s_axi_arqos,
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

// read/write arbitration schemes (arb_algorithm)
localparam [1:0]
    ARB_RD_PRI_REG = 2'd0,
    ARB_ROUND_ROBIN = 2'd1,
    ARB_TDM = 2'd2;

// transfer directions of the command slot
localparam [0:0]
    DIR_WRITE = 1'd0,
    DIR_READ = 1'd1;

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

    if (CL < 1 || T_RCD < 1 || T_RP < 1 || T_RAS < 1 || T_WR < 0 || T_RFC < 1 || CTRL_LAT < 0 ||
            T_RTP < 1 || T_WTR < 1 || T_RTW < 1 || T_RRD < 1 || T_FAW < 0) begin
        $error("Error: timing parameters must be positive (instance %m)");
        $finish;
    end

    if (HOLD_BEATS < 1 || HOLD_IDLE < 1) begin
        $error("Error: HOLD_BEATS and HOLD_IDLE must be at least 1 (instance %m)");
        $finish;
    end

    if (T_REFI <= T_RFC + T_RP) begin
        $error("Error: T_REFI must exceed T_RFC + T_RP or the device only refreshes (instance %m)");
        $finish;
    end

    if (READ_CREDITS < 1 || READ_CREDITS > R_DEPTH) begin
        $error("Error: READ_CREDITS must be 1 to R_DEPTH (instance %m)");
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
 * Queues, all owned by the single process below. The address queues remember the cycle of
 * each burst's handshake, from which its row may be opened.
 */
reg [ID_WIDTH-1:0]   aw_q_id[QUEUE_DEPTH-1:0];
reg [ADDR_WIDTH-1:0] aw_q_addr[QUEUE_DEPTH-1:0];
reg [7:0]            aw_q_len[QUEUE_DEPTH-1:0];
reg [63:0]           aw_q_time[QUEUE_DEPTH-1:0];
reg [3:0]            aw_q_qos[QUEUE_DEPTH-1:0];
reg [QW-1:0] aw_q_rd = 0, aw_q_wr = 0;
reg [QW:0]   aw_q_count = 0;

reg [ID_WIDTH-1:0]   ar_q_id[QUEUE_DEPTH-1:0];
reg [ADDR_WIDTH-1:0] ar_q_addr[QUEUE_DEPTH-1:0];
reg [7:0]            ar_q_len[QUEUE_DEPTH-1:0];
reg [63:0]           ar_q_time[QUEUE_DEPTH-1:0];
reg [3:0]            ar_q_qos[QUEUE_DEPTH-1:0];
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
reg [63:0]         busy_until = 64'd0;   // end of the current refresh; no ACT before it
reg [63:0]         refresh_count = 64'd0;
reg [BANKS-1:0]    bank_open = {BANKS{1'b0}};
reg [ROW_BITS-1:0] bank_row[BANKS-1:0];
reg [63:0]         bank_col_ok[BANKS-1:0];  // earliest column command (ACT + T_RCD)
reg [63:0]         bank_pre_ok[BANKS-1:0];  // earliest PRE (ACT + T_RAS, write + T_WR, read + T_RTP)
reg [63:0]         act_time[3:0];           // the last four ACTs, oldest at act_wr once full
reg [1:0]          act_wr = 2'd0;
reg [2:0]          act_count = 3'd0;        // ACTs recorded, at most four
reg [63:0]         last_rd_col = 64'd0;     // last read column command (for T_RTW)
reg [63:0]         last_wr_col = 64'd0;     // last write column command (for T_WTR)
reg                rd_col_seen = 1'b0;
reg                wr_col_seen = 1'b0;

/*
 * The read and the write context: the burst each is working on
 */
reg                  rd_busy = 1'b0;
reg                  rd_fresh = 1'b0;         // no beat of the burst issued yet
reg [ID_WIDTH-1:0]   rd_id = {ID_WIDTH{1'b0}};
reg [ADDR_WIDTH-1:0] rd_addr = {ADDR_WIDTH{1'b0}};
reg [8:0]            rd_left = 9'd0;          // beats still to issue
reg [63:0]           rd_known = 64'd0;        // earliest ACT for the burst's row
reg [63:0]           rd_start = 64'd0;        // first cycle a beat of the burst may issue
reg [3:0]            rd_qos = 4'd0;

reg                  wr_busy = 1'b0;
reg                  wr_fresh = 1'b0;
reg [ID_WIDTH-1:0]   wr_id = {ID_WIDTH{1'b0}};
reg [ADDR_WIDTH-1:0] wr_addr = {ADDR_WIDTH{1'b0}};
reg [8:0]            wr_left = 9'd0;
reg [63:0]           wr_known = 64'd0;
reg [63:0]           wr_start = 64'd0;
reg [3:0]            wr_qos = 4'd0;

/*
 * Arbiter: the direction holding the command slot, and the beat it has planned
 */
reg                  hold = 1'b1;
reg [0:0]            hold_dir = DIR_READ;
reg [31:0]           hold_beats = 32'd0;      // beats issued since the direction took the slot
reg [31:0]           hold_wait = 32'd0;       // cycles the holder has had no beat ready
reg [0:0]            last_dir = DIR_READ;     // the direction of the last arbitration (MIG's rnw_i)
reg                  tdm_read = 1'b1;         // TDM: this cycle belongs to reads
reg                  plan_valid = 1'b0;       // a beat's bank commands are scheduled...
reg [0:0]            plan_dir = DIR_WRITE;
reg [BANK_BITS-1:0]  plan_bank = {BANK_BITS{1'b0}};
reg [63:0]           plan_col_at = 64'd0;     // ...and its column command may issue from here

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
    reg rd_ready, wr_ready, more, boundary;
    reg rd_present, wr_present, rd_qos_on, wr_qos_on, other, other_qos;
    reg [0:0] sel_dir;
    reg [BANK_BITS-1:0] bank;
    reg [ROW_BITS-1:0] row;
    reg [63:0] t_act, t_free, t_col;
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
        act_wr = 2'd0;
        act_count = 3'd0;
        rd_col_seen = 1'b0;
        wr_col_seen = 1'b0;
        rd_busy = 1'b0;
        wr_busy = 1'b0;
        // MIG's arbiter leaves reset with reads selected, and the selected side holds.
        hold = 1'b1;
        hold_dir = DIR_READ;
        hold_beats = 32'd0;
        hold_wait = 32'd0;
        last_dir = DIR_READ;
        tdm_read = 1'b1;
        plan_valid = 1'b0;
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
            aw_q_time[aw_q_wr] = now;
            aw_q_qos[aw_q_wr] = s_axi_awqos;
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
            ar_q_time[ar_q_wr] = now;
            ar_q_qos[ar_q_wr] = s_axi_arqos;
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
         * Refresh, once both contexts are between bursts: precharge all (once each open bank
         * allows it), then REF.
         */
        if (ref_pending && now >= busy_until && !plan_valid && !rd_busy && !wr_busy) begin
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
        end

        /*
         * Each context takes the next burst of its direction when it has none; a due
         * refresh holds new bursts back. A write burst also needs room for its response.
         */
        if (!ref_pending && !rd_busy && ar_q_count != 0) begin
            rd_busy = 1'b1;
            rd_fresh = 1'b1;
            rd_id = ar_q_id[ar_q_rd];
            rd_addr = ar_q_addr[ar_q_rd];
            rd_left = {1'b0, ar_q_len[ar_q_rd]} + 9'd1;
            rd_known = ar_q_time[ar_q_rd] + 64'd1;
            rd_start = now + 64'd1;
            rd_qos = ar_q_qos[ar_q_rd];
            ar_q_rd = ar_q_rd + 1;
            ar_q_count = ar_q_count - 1;
        end
        if (!ref_pending && !wr_busy && aw_q_count != 0 && b_q_count < QUEUE_DEPTH) begin
            wr_busy = 1'b1;
            wr_fresh = 1'b1;
            wr_id = aw_q_id[aw_q_rd];
            wr_addr = aw_q_addr[aw_q_rd];
            wr_left = {1'b0, aw_q_len[aw_q_rd]} + 9'd1;
            wr_known = aw_q_time[aw_q_rd] + 64'd1;
            wr_start = now + 64'd1;
            wr_qos = aw_q_qos[aw_q_rd];
            aw_q_rd = aw_q_rd + 1;
            aw_q_count = aw_q_count - 1;
        end

        /*
         * Arbiter: decide which direction has the command slot (sel_dir), then, if that
         * direction has a beat ready, schedule the bank commands of its next beat. Cycles in
         * which a planned beat still waits for its column time, or a refresh runs, are cycles
         * in which MIG's app_rdy is low: nothing is decided and no counter moves.
         */
        if (!plan_valid && now >= busy_until) begin
            rd_ready = rd_busy && now >= rd_start && r_q_count < READ_CREDITS;
            wr_ready = wr_busy && now >= wr_start && w_q_count != 0;
            sel_dir = hold_dir;
            if (arb_algorithm == ARB_ROUND_ROBIN) begin
                // Beat by beat: reads go when ready and it is their turn or writes are not
                // ready; the turn passes to reads after any cycle in which reads did not go.
                sel_dir = rd_ready && (last_dir == DIR_WRITE || !wr_ready) ? DIR_READ : DIR_WRITE;
                last_dir = sel_dir;
            end else if (arb_algorithm == ARB_TDM) begin
                sel_dir = tdm_read ? DIR_READ : DIR_WRITE;
            end else begin
                // RD_PRI_REG. The holder's hold ends at a burst boundary on the starve limit or
                // the other side's QoS, and at any time on the wait limit.
                // A burst is present when a context works on one or one waits in its queue
                // (MIG's arvalid_int / awvalid_int); only this scheme looks at presence and QoS.
                rd_present = rd_busy || (ar_q_count != 0 && !ref_pending);
                wr_present = wr_busy || (aw_q_count != 0 && !ref_pending);
                rd_qos_on = rd_busy ? rd_qos != 4'd0 :
                    (ar_q_count != 0 && ar_q_qos[ar_q_rd] != 4'd0);
                wr_qos_on = wr_busy ? wr_qos != 4'd0 :
                    (aw_q_count != 0 && aw_q_qos[aw_q_rd] != 4'd0);
                if (hold_dir == DIR_READ) begin
                    more = rd_present;
                    other = wr_present;
                    other_qos = wr_qos_on;
                    boundary = !rd_busy || rd_fresh;
                end else begin
                    more = wr_present;
                    other = rd_present;
                    other_qos = rd_qos_on;
                    boundary = !wr_busy || wr_fresh;
                end
                if (hold && more && ((boundary && hold_beats != 32'd0 &&
                        (hold_beats >= HOLD_BEATS || other_qos)) ||
                        hold_wait >= HOLD_IDLE)) begin
                    hold = 1'b0;
                end
                // The other direction takes the slot when it has a burst and the current one
                // has none, or has lost its hold; the switch costs no cycle.
                if (other && (!more || !hold)) begin
                    hold_dir = ~hold_dir;
                    hold_beats = 32'd0;
                    hold_wait = 32'd0;
                    hold = 1'b1;
                end else if (!hold) begin
                    hold_beats = 32'd0;
                    hold_wait = 32'd0;
                    hold = 1'b1;
                end
                sel_dir = hold_dir;
                if (!(sel_dir == DIR_READ ? rd_ready : wr_ready)) begin
                    if (sel_dir == DIR_READ ? rd_present : wr_present) begin
                        hold_wait = hold_wait + 32'd1;
                    end else begin
                        hold_wait = 32'd0;
                    end
                end
            end
            if (sel_dir == DIR_READ ? rd_ready : wr_ready) begin
                hold_wait = 32'd0;
                if (sel_dir == DIR_READ) begin
                    bank = rd_addr[BANK_LSB +: BANK_BITS];
                    row = rd_addr[ROW_LSB +: ROW_BITS];
                end else begin
                    bank = wr_addr[BANK_LSB +: BANK_BITS];
                    row = wr_addr[ROW_LSB +: ROW_BITS];
                end
                if (bank_open[bank] && bank_row[bank] == row) begin
                    // Row hit.
                    t_col = max64(now, bank_col_ok[bank]);
                end else begin
                    t_act = sel_dir == DIR_READ ? rd_known : wr_known;
                    if (bank_open[bank]) begin
                        // Row conflict: precharge first.
                        t_act = max64(t_act, bank_pre_ok[bank]) + T_RP;
                    end
                    t_act = max64(t_act, busy_until);
                    if (act_count != 3'd0) begin
                        t_act = max64(t_act, act_time[act_wr - 2'd1] + T_RRD);
                    end
                    if (act_count == 3'd4) begin
                        t_act = max64(t_act, act_time[act_wr] + T_FAW);
                    end
                    act_time[act_wr] = t_act;
                    act_wr = act_wr + 2'd1;
                    if (act_count != 3'd4) begin
                        act_count = act_count + 3'd1;
                    end
                    bank_open[bank] = 1'b1;
                    bank_row[bank] = row;
                    bank_col_ok[bank] = t_act + T_RCD;
                    bank_pre_ok[bank] = t_act + T_RAS;
                    t_col = max64(now, t_act + T_RCD);
                end
                // Bus turnaround.
                if (sel_dir == DIR_READ && wr_col_seen) begin
                    t_col = max64(t_col, last_wr_col + T_WTR);
                end
                if (sel_dir == DIR_WRITE && rd_col_seen) begin
                    t_col = max64(t_col, last_rd_col + T_RTW);
                end
                plan_valid = 1'b1;
                plan_dir = sel_dir;
                plan_bank = bank;
                plan_col_at = t_col;
            end
        end

        /*
         * The planned beat's column command. Its data (write) or room for its data (read)
         * was there when it was planned and cannot have gone since.
         */
        if (plan_valid && now >= plan_col_at) begin
            if (plan_dir == DIR_WRITE) begin
                if (w_q_last[w_q_rd] != (wr_left == 9'd1)) begin
                    $error("ddr3_model %m: WLAST is %0d on a beat with %0d beats left in the burst",
                        w_q_last[w_q_rd], wr_left);
                end
                wr_data = 512'd0;
                wr_data[DATA_WIDTH-1:0] = w_q_data[w_q_rd];
                wr_strb = 64'd0;
                wr_strb[STRB_WIDTH-1:0] = w_q_strb[w_q_rd];
                ddr3_model_write(mem_handle, {{64-ADDR_WIDTH{1'b0}}, wr_addr}, DATA_BYTES,
                    wr_data, wr_strb);
                w_q_rd = w_q_rd + 1;
                w_q_count = w_q_count - 1;
                bank_pre_ok[plan_bank] = max64(bank_pre_ok[plan_bank], now + T_WR);
                last_wr_col = now;
                wr_col_seen = 1'b1;
                wr_addr = wr_addr + DATA_BYTES;
                wr_left = wr_left - 9'd1;
                wr_fresh = 1'b0;
                if (wr_left == 9'd0) begin
                    b_q_id[b_q_wr] = wr_id;
                    b_q_wr = b_q_wr + 1;
                    b_q_count = b_q_count + 1;
                    wr_busy = 1'b0;
                end
            end else begin
                ddr3_model_read(mem_handle, {{64-ADDR_WIDTH{1'b0}}, rd_addr}, DATA_BYTES,
                    rd_data);
                r_q_data[r_q_wr] = rd_data[DATA_WIDTH-1:0];
                r_q_id[r_q_wr] = rd_id;
                r_q_last[r_q_wr] = rd_left == 9'd1;
                r_q_due[r_q_wr] = now + CL + CTRL_LAT;
                r_q_wr = r_q_wr + 1;
                r_q_count = r_q_count + 1;
                bank_pre_ok[plan_bank] = max64(bank_pre_ok[plan_bank], now + T_RTP);
                last_rd_col = now;
                rd_col_seen = 1'b1;
                rd_addr = rd_addr + DATA_BYTES;
                rd_left = rd_left - 9'd1;
                rd_fresh = 1'b0;
                if (rd_left == 9'd0) begin
                    rd_busy = 1'b0;
                end
            end
            plan_valid = 1'b0;
            hold_beats = hold_beats + 32'd1;
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

        if (arb_algorithm != ARB_RD_PRI_REG && arb_algorithm != ARB_ROUND_ROBIN &&
                arb_algorithm != ARB_TDM) begin
            $error("ddr3_model %m: arb_algorithm 3 is not a scheme (0 RD_PRI_REG, 1 ROUND_ROBIN, 2 TDM)");
        end
        // TDM's owner of the slot changes every cycle, whether or not a command went.
        tdm_read = ~tdm_read;
        now = now + 64'd1;
    end
end
/* verilator lint_on BLKSEQ */

endmodule

`resetall
