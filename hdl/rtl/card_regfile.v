/*
 * The card's register file: the user BAR's AXI4-Lite slave and every register behind it, as
 * hdl/regs.toml maps them through the generated include card_regs.vh (documented in
 * docs/register-map.md).
 *
 * - s_axil_*: the user BAR, served by axil_reg_if; a read is answered three cycles after its
 *   address is taken (three registered steps, see the read multiplexer below).
 * - Settings (CONTROL, the frame source and capture ring registers, the timestamp) leave on
 *   the outputs straight from their registers; CLEAR.COUNTERS and a write of CAP_BASE or
 *   CAP_SIZE are one-cycle pulses (clear, cap_ring_reset).
 * - Status (counters, SRC_STATUS, the capture ring's pointers) and events (ERROR,
 *   IRQ_STATUS) come in from the blocks; a 64-bit counter's high word is latched when its low
 *   word is read.
 * - usr_irq_req/usr_irq_ack: the XDMA user interrupt handshake.
 *
 * The build's variant sets CAPS and the CONTROL modes that a write may select; a CONTROL
 * write with any other mode is refused (SLVERR, ERROR.MODE). Every output comes from a
 * register.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

// Kept as its own level of hierarchy in synthesis: every output is a register, so the boundary
// costs no logic level, and merged into card_core Yosys maps the memory-mapped variant's
// capture credit path (axi_mm_path's write upsizer into the capture writer) one LUT level over
// the axi_aclk budget of fpga/README.md (7 against 6), with it both variants meet it.
(* keep_hierarchy = "yes" *)
module card_regfile #
(
    // Which XDMA configuration the card is built for (card_core's VARIANT): 1 memory-mapped,
    // 2 stream, 3 both side by side (simulation only); sets CAPS and the accepted modes
    parameter VARIANT = 3,
    // Width of the user BAR byte address in bits (the register window repeats across it)
    parameter ADDR_WIDTH = 16,
    // Width of the DDR address in bits: log2 of the DDR size in bytes, shown in
    // CAPS.DDR_ADDR_BITS when the build has the memory-mapped side
    parameter DDR_ADDR_WIDTH = 31,
    // Width of the capture ring's byte pointers in bits (the ring settings, CAP_WPTR, CAP_FILL)
    parameter PTR_WIDTH = 31,
    // Value of the read-only identifier register
    parameter [31:0] CARD_ID = 32'h4441_5131,
    // Value of the read-only version register: major in [31:16], minor in [15:0]
    parameter [31:0] CARD_VERSION = 32'h0000_0003
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI4-Lite slave: the user BAR
     */
    input  wire [ADDR_WIDTH-1:0]  s_axil_awaddr,
    input  wire [2:0]             s_axil_awprot,
    input  wire                   s_axil_awvalid,
    output wire                   s_axil_awready,
    input  wire [31:0]            s_axil_wdata,
    input  wire [3:0]             s_axil_wstrb,
    input  wire                   s_axil_wvalid,
    output wire                   s_axil_wready,
    output wire [1:0]             s_axil_bresp,
    output wire                   s_axil_bvalid,
    input  wire                   s_axil_bready,
    input  wire [ADDR_WIDTH-1:0]  s_axil_araddr,
    input  wire [2:0]             s_axil_arprot,
    input  wire                   s_axil_arvalid,
    output wire                   s_axil_arready,
    output wire [31:0]            s_axil_rdata,
    output wire [1:0]             s_axil_rresp,
    output wire                   s_axil_rvalid,
    input  wire                   s_axil_rready,

    /*
     * Settings, each from its register
     */
    output wire [2:0]             mode,             // CONTROL.MODE
    output wire                   ch0_en,           // CONTROL.CH0_EN
    output wire                   ch1_en,           // CONTROL.CH1_EN
    output wire                   clear,            // CLEAR.COUNTERS written: one cycle
    output wire [63:0]            timestamp,        // TIMESTAMP: cycles since reset
    output wire [31:0]            src0_frame_len,   // SRC0_FRAME_LEN, as written
    output wire [31:0]            src0_gap,         // SRC0_GAP
    output wire                   src0_pattern,     // SRC0_PATTERN.KIND
    output wire [31:0]            src0_seed,        // SRC0_SEED
    output wire                   src0_drop,        // SRC0_POLICY.DROP
    output wire [31:0]            src1_frame_len,   // SRC1_FRAME_LEN, as written
    output wire [31:0]            src1_gap,         // SRC1_GAP
    output wire                   src1_pattern,     // SRC1_PATTERN.KIND
    output wire [31:0]            src1_seed,        // SRC1_SEED
    output wire                   src1_drop,        // SRC1_POLICY.DROP
    output wire [PTR_WIDTH-1:0]   cap_base,         // CAP_BASE
    output wire [PTR_WIDTH-1:0]   cap_size,         // CAP_SIZE
    output wire [PTR_WIDTH-1:0]   cap_rptr,         // CAP_RPTR
    output wire                   cap_ring_reset,   // CAP_BASE or CAP_SIZE written: one cycle

    /*
     * Status from the blocks
     */
    input  wire                   src0_clearing,
    input  wire                   src0_clear_tail,
    input  wire                   src1_clearing,
    input  wire                   src1_clear_tail,
    input  wire [63:0]            src0_frames_sent,
    input  wire [63:0]            src0_frames_dropped,
    input  wire [63:0]            src1_frames_sent,
    input  wire [63:0]            src1_frames_dropped,
    input  wire [63:0]            chk_frames_good,
    input  wire [63:0]            chk_frames_bad,
    input  wire [63:0]            chk_frames_missing,
    input  wire [31:0]            chk_err_magic,
    input  wire [31:0]            chk_err_length,
    input  wire [31:0]            chk_err_crc,
    input  wire [31:0]            chk_err_version,
    input  wire [31:0]            chk_last_seq,
    input  wire [PTR_WIDTH-1:0]   cap_wptr,
    input  wire [PTR_WIDTH-1:0]   cap_fill,
    input  wire [63:0]            cap_overflow_count,
    input  wire [63:0]            cap_frame_count,

    /*
     * Events, one cycle each
     */
    input  wire                   cap_overflow_event,  // IRQ_STATUS.CAP_OVERFLOW
    input  wire                   cap_ring_error,      // ERROR.CAP_RING
    input  wire                   dma_addr_error,      // ERROR.DMA_ADDR
    input  wire                   dma_burst_error,     // ERROR.DMA_BURST

    /*
     * User interrupt (XDMA handshake: the request is held until acknowledged)
     */
    output wire                   usr_irq_req,
    input  wire                   usr_irq_ack
);

// The generated map declares a localparam for every register, field and value; this file
// uses only those it decodes, so the unused ones are expected.
/* verilator lint_off UNUSEDPARAM */
`include "card_regs.vh"
/* verilator lint_on UNUSEDPARAM */

// What the variant has.
localparam MM_EN = (VARIANT % 2) == 1;
localparam STREAM_EN = (VARIANT / 2) % 2 == 1;
// CONTROL.MODE values this build serves, one bit each.
localparam [7:0] MODES = (8'd1 << REG_CONTROL_MODE_OFF)
    | (STREAM_EN ? (8'd1 << REG_CONTROL_MODE_LOOP) | (8'd1 << REG_CONTROL_MODE_GEN)
        | (8'd1 << REG_CONTROL_MODE_ECHO) | (8'd1 << REG_CONTROL_MODE_CHECK) : 8'd0)
    | (MM_EN ? (8'd1 << REG_CONTROL_MODE_CAPTURE) : 8'd0);
localparam [31:0] CAPS = ((MM_EN ? 32'd1 : 32'd0) << REG_CAPS_MM_LSB)
    | ((STREAM_EN ? 32'd1 : 32'd0) << REG_CAPS_STREAM_LSB)
    | ((STREAM_EN ? 32'd1 : 32'd0) << REG_CAPS_H2C_STREAMS_LSB)
    | ((STREAM_EN ? 32'd2 : 32'd0) << REG_CAPS_C2H_STREAMS_LSB)
    | ({24'd0, MODES} << REG_CAPS_MODES_LSB)
    | ((MM_EN ? DDR_ADDR_WIDTH : 0) << REG_CAPS_DDR_ADDR_BITS_LSB)
    | ((MM_EN && STREAM_EN ? 32'd1 : 32'd0) << REG_CAPS_SIM_ONLY_LSB);

// check configuration
initial begin
    if (VARIANT < 1 || VARIANT > 3) begin
        $error("Error: VARIANT must be 1 (mm), 2 (stream) or 3 (combined, simulation only) (instance %m)");
        $finish;
    end

    if (ADDR_WIDTH < REGS_WINDOW_BITS) begin
        $error("Error: the user BAR must hold the register window, ADDR_WIDTH >= %0d (instance %m)", REGS_WINDOW_BITS);
        $finish;
    end

    if (PTR_WIDTH < 1 || PTR_WIDTH > 31 || DDR_ADDR_WIDTH < 1 || DDR_ADDR_WIDTH > 31) begin
        $error("Error: PTR_WIDTH and DDR_ADDR_WIDTH must be 1 to 31 (instance %m)");
        $finish;
    end
end

wire [ADDR_WIDTH-1:0] reg_wr_addr;
wire [31:0] reg_wr_data;
wire [3:0] reg_wr_strb;
wire reg_wr_en;
wire [ADDR_WIDTH-1:0] reg_rd_addr;
wire reg_rd_en;
// The read multiplexer's answer (see below): axil_reg_if takes it three cycles after reg_rd_en.
reg [31:0] reg_rd_data_reg = 32'd0;
wire reg_wr_err;

axil_reg_if #(
    .RD_LATENCY(3),
    .DATA_WIDTH(32),
    .ADDR_WIDTH(ADDR_WIDTH)
)
axil_reg_if_inst (
    .clk(clk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .reg_wr_addr(reg_wr_addr),
    .reg_wr_data(reg_wr_data),
    .reg_wr_strb(reg_wr_strb),
    .reg_wr_en(reg_wr_en),
    .reg_rd_addr(reg_rd_addr),
    .reg_rd_en(reg_rd_en),
    .reg_rd_data(reg_rd_data_reg),
    .reg_wr_err(reg_wr_err)
);

// Word offsets within the register window; the window repeats across the BAR.
wire [REGS_WINDOW_BITS-1:0] wr_off = {reg_wr_addr[REGS_WINDOW_BITS-1:2], 2'b00};
wire [REGS_WINDOW_BITS-1:0] rd_off = {reg_rd_addr[REGS_WINDOW_BITS-1:2], 2'b00};

// The new value of a read/write register: the written bytes that the strobes select, limited
// to the bits that the map's fields cover.
function [31:0] reg_update(input [31:0] old, input [31:0] data, input [3:0] strb, input [31:0] mask);
    integer b;
    begin
        reg_update = old;
        for (b = 0; b < 4; b = b + 1) begin
            if (strb[b]) begin
                reg_update[8*b +: 8] = data[8*b +: 8];
            end
        end
        reg_update = reg_update & mask;
    end
endfunction


reg [31:0] scratch_reg = REG_SCRATCH_RESET;
reg [31:0] control_reg = REG_CONTROL_RESET;
reg clear_reg = 1'b0;
reg [63:0] timestamp_reg = 64'd0;

reg [31:0] src0_frame_len_reg = REG_SRC0_FRAME_LEN_RESET;
reg [31:0] src0_gap_reg = REG_SRC0_GAP_RESET;
reg [31:0] src0_pattern_reg = REG_SRC0_PATTERN_RESET;
reg [31:0] src0_seed_reg = REG_SRC0_SEED_RESET;
reg [31:0] src0_policy_reg = REG_SRC0_POLICY_RESET;
reg [31:0] src1_frame_len_reg = REG_SRC1_FRAME_LEN_RESET;
reg [31:0] src1_gap_reg = REG_SRC1_GAP_RESET;
reg [31:0] src1_pattern_reg = REG_SRC1_PATTERN_RESET;
reg [31:0] src1_seed_reg = REG_SRC1_SEED_RESET;
reg [31:0] src1_policy_reg = REG_SRC1_POLICY_RESET;

reg [31:0] cap_base_reg = REG_CAP_BASE_RESET;
reg [31:0] cap_size_reg = REG_CAP_SIZE_RESET;
reg [31:0] cap_rptr_reg = REG_CAP_RPTR_RESET;
reg [31:0] cap_irq_level_reg = REG_CAP_IRQ_LEVEL_RESET;
reg cap_ring_reset_reg = 1'b0;

reg [31:0] irq_enable_reg = REG_IRQ_ENABLE_RESET;
reg [31:0] irq_status_reg = REG_IRQ_STATUS_RESET;
reg usr_irq_req_reg = 1'b0;
reg irq_again_reg = 1'b0;
reg cap_fill_above_reg = 1'b0;
// The fill level compare, registered before its edge is taken: the 32-bit compare and the
// interrupt handshake behind it do not fit one cycle (the event comes a cycle later).
reg cap_fill_above_now_reg = 1'b0;
reg [31:0] error_reg = REG_ERROR_RESET;

// High words of the 64-bit counters, latched when their low word is read.
reg [31:0] timestamp_hi_reg = 32'd0;
reg [31:0] src0_sent_hi_reg = 32'd0;
reg [31:0] src0_dropped_hi_reg = 32'd0;
reg [31:0] src1_sent_hi_reg = 32'd0;
reg [31:0] src1_dropped_hi_reg = 32'd0;
reg [31:0] chk_good_hi_reg = 32'd0;
reg [31:0] chk_bad_hi_reg = 32'd0;
reg [31:0] chk_missing_hi_reg = 32'd0;
reg [31:0] cap_overflow_hi_reg = 32'd0;
reg [31:0] cap_frames_hi_reg = 32'd0;

// The ring pointers as their registers read.
wire [31:0] cap_wptr_word = {{(32-PTR_WIDTH){1'b0}}, cap_wptr};
wire [31:0] cap_fill_word = {{(32-PTR_WIDTH){1'b0}}, cap_fill};
wire [31:0] src_status = {22'd0, src1_clear_tail, src1_clearing, 6'd0, src0_clear_tail,
    src0_clearing};

// Register reads in three registered steps, so that none is a deep multiplexer: the address
// decoded into one select bit per register (rd_sel_reg), then the selected value of each
// group of registers (rd_parts_reg, an AND-OR over at most 12 registers), then the OR of the
// groups (reg_rd_data_reg). axil_reg_if takes the value three cycles after reg_rd_en; the
// address is held until then. The values are sampled in the cycle after reg_rd_en, the cycle
// the 64-bit counters' high words are latched in. CLEAR is write-only and reads as zero, like
// every unmapped word.
localparam RD_REGS = 50;
localparam RD_GROUPS = 5;
reg rd_en_d_reg = 1'b0;                    // reg_rd_en one cycle later: rd_sel_reg is valid
reg [RD_REGS-1:0] rd_sel_reg = {RD_REGS{1'b0}};
reg [32*RD_GROUPS-1:0] rd_parts;
reg [32*RD_GROUPS-1:0] rd_parts_reg = {32*RD_GROUPS{1'b0}};
reg [31:0] rd_any;
integer rd_g;

always @* begin
    rd_parts = {32*RD_GROUPS{1'b0}};
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[0]}} & CARD_ID);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[1]}} & CARD_VERSION);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[2]}} & scratch_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[3]}} & CAPS);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[4]}} & error_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[5]}} & control_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[6]}} & timestamp_reg[31:0]);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[7]}} & timestamp_hi_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[8]}} & src0_frame_len_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[9]}} & src0_gap_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[10]}} & src0_pattern_reg);
    rd_parts[32*0 +: 32] = rd_parts[32*0 +: 32] | ({32{rd_sel_reg[11]}} & src0_seed_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[12]}} & src0_policy_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[13]}} & src0_frames_sent[31:0]);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[14]}} & src0_sent_hi_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[15]}} & src0_frames_dropped[31:0]);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[16]}} & src0_dropped_hi_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[17]}} & src1_frame_len_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[18]}} & src1_gap_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[19]}} & src1_pattern_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[20]}} & src1_seed_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[21]}} & src1_policy_reg);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[22]}} & src1_frames_sent[31:0]);
    rd_parts[32*1 +: 32] = rd_parts[32*1 +: 32] | ({32{rd_sel_reg[23]}} & src1_sent_hi_reg);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[24]}} & src1_frames_dropped[31:0]);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[25]}} & src1_dropped_hi_reg);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[26]}} & chk_frames_good[31:0]);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[27]}} & chk_good_hi_reg);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[28]}} & chk_frames_bad[31:0]);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[29]}} & chk_bad_hi_reg);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[30]}} & chk_frames_missing[31:0]);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[31]}} & chk_missing_hi_reg);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[32]}} & chk_err_magic);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[33]}} & chk_err_length);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[34]}} & chk_err_crc);
    rd_parts[32*2 +: 32] = rd_parts[32*2 +: 32] | ({32{rd_sel_reg[35]}} & chk_err_version);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[36]}} & chk_last_seq);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[37]}} & cap_base_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[38]}} & cap_size_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[39]}} & cap_wptr_word);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[40]}} & cap_rptr_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[41]}} & cap_fill_word);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[42]}} & cap_irq_level_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[43]}} & cap_overflow_count[31:0]);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[44]}} & cap_overflow_hi_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[45]}} & cap_frame_count[31:0]);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[46]}} & cap_frames_hi_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[47]}} & irq_enable_reg);
    rd_parts[32*4 +: 32] = rd_parts[32*4 +: 32] | ({32{rd_sel_reg[48]}} & irq_status_reg);
    rd_parts[32*4 +: 32] = rd_parts[32*4 +: 32] | ({32{rd_sel_reg[49]}} & src_status);
    rd_any = 32'd0;
    for (rd_g = 0; rd_g < RD_GROUPS; rd_g = rd_g + 1) begin
        rd_any = rd_any | rd_parts_reg[32*rd_g +: 32];
    end
end

always @(posedge clk) begin
    rd_en_d_reg <= reg_rd_en;
    rd_sel_reg <= {
        rd_off == REG_SRC_STATUS,
        rd_off == REG_IRQ_STATUS,
        rd_off == REG_IRQ_ENABLE,
        rd_off == REG_CAP_FRAMES_HI,
        rd_off == REG_CAP_FRAMES_LO,
        rd_off == REG_CAP_OVERFLOW_HI,
        rd_off == REG_CAP_OVERFLOW_LO,
        rd_off == REG_CAP_IRQ_LEVEL,
        rd_off == REG_CAP_FILL,
        rd_off == REG_CAP_RPTR,
        rd_off == REG_CAP_WPTR,
        rd_off == REG_CAP_SIZE,
        rd_off == REG_CAP_BASE,
        rd_off == REG_CHK_LAST_SEQ,
        rd_off == REG_CHK_ERR_VERSION,
        rd_off == REG_CHK_ERR_CRC,
        rd_off == REG_CHK_ERR_LENGTH,
        rd_off == REG_CHK_ERR_MAGIC,
        rd_off == REG_CHK_MISSING_HI,
        rd_off == REG_CHK_MISSING_LO,
        rd_off == REG_CHK_BAD_HI,
        rd_off == REG_CHK_BAD_LO,
        rd_off == REG_CHK_GOOD_HI,
        rd_off == REG_CHK_GOOD_LO,
        rd_off == REG_SRC1_DROPPED_HI,
        rd_off == REG_SRC1_DROPPED_LO,
        rd_off == REG_SRC1_SENT_HI,
        rd_off == REG_SRC1_SENT_LO,
        rd_off == REG_SRC1_POLICY,
        rd_off == REG_SRC1_SEED,
        rd_off == REG_SRC1_PATTERN,
        rd_off == REG_SRC1_GAP,
        rd_off == REG_SRC1_FRAME_LEN,
        rd_off == REG_SRC0_DROPPED_HI,
        rd_off == REG_SRC0_DROPPED_LO,
        rd_off == REG_SRC0_SENT_HI,
        rd_off == REG_SRC0_SENT_LO,
        rd_off == REG_SRC0_POLICY,
        rd_off == REG_SRC0_SEED,
        rd_off == REG_SRC0_PATTERN,
        rd_off == REG_SRC0_GAP,
        rd_off == REG_SRC0_FRAME_LEN,
        rd_off == REG_TIMESTAMP_HI,
        rd_off == REG_TIMESTAMP_LO,
        rd_off == REG_CONTROL,
        rd_off == REG_ERROR,
        rd_off == REG_CAPS,
        rd_off == REG_SCRATCH,
        rd_off == REG_VERSION,
        rd_off == REG_ID
    };
    rd_parts_reg <= rd_parts;
    reg_rd_data_reg <= rd_any;
end

// A CONTROL write takes effect only with a mode this build serves; otherwise it is refused.
wire [31:0] control_new = reg_update(control_reg, reg_wr_data, reg_wr_strb, REG_CONTROL_MASK);
wire control_mode_ok = MODES[control_new[REG_CONTROL_MODE_LSB +: REG_CONTROL_MODE_BITS]];
wire control_refused = reg_wr_en && wr_off == REG_CONTROL && !control_mode_ok;
assign reg_wr_err = control_refused;

// Error events (ERROR register).
// A refused CONTROL write sets its ERROR bit a cycle later, from a register: the write's
// decode and the mode check take most of the cycle already (its SLVERR needs them at once).
reg control_refused_reg = 1'b0;
wire [31:0] error_events = {28'd0, dma_burst_error, dma_addr_error, cap_ring_error,
    control_refused_reg};

// Fill level event: CAP_FILL rose to or above a non-zero CAP_IRQ_LEVEL.
wire cap_fill_above = cap_irq_level_reg != 32'd0 && cap_fill_word >= cap_irq_level_reg;
wire [31:0] irq_events = {30'd0, cap_overflow_event,
    cap_fill_above_now_reg && !cap_fill_above_reg};

always @(posedge clk) begin
    clear_reg <= 1'b0;
    cap_ring_reset_reg <= 1'b0;
    timestamp_reg <= timestamp_reg + 1;
    cap_fill_above_now_reg <= cap_fill_above;
    cap_fill_above_reg <= cap_fill_above_now_reg;

    // 64-bit reads: the low word latches the high word.
    if (rd_en_d_reg) begin
        case (rd_off)
            REG_TIMESTAMP_LO:    timestamp_hi_reg <= timestamp_reg[63:32];
            REG_SRC0_SENT_LO:    src0_sent_hi_reg <= src0_frames_sent[63:32];
            REG_SRC0_DROPPED_LO: src0_dropped_hi_reg <= src0_frames_dropped[63:32];
            REG_SRC1_SENT_LO:    src1_sent_hi_reg <= src1_frames_sent[63:32];
            REG_SRC1_DROPPED_LO: src1_dropped_hi_reg <= src1_frames_dropped[63:32];
            REG_CHK_GOOD_LO:     chk_good_hi_reg <= chk_frames_good[63:32];
            REG_CHK_BAD_LO:      chk_bad_hi_reg <= chk_frames_bad[63:32];
            REG_CHK_MISSING_LO:  chk_missing_hi_reg <= chk_frames_missing[63:32];
            REG_CAP_OVERFLOW_LO: cap_overflow_hi_reg <= cap_overflow_count[63:32];
            REG_CAP_FRAMES_LO:   cap_frames_hi_reg <= cap_frame_count[63:32];
            default: begin
                // no latch for other words
            end
        endcase
    end

    // Interrupt status: events set bits, a written 1 clears them (an event wins).
    if (reg_wr_en && wr_off == REG_IRQ_STATUS) begin
        irq_status_reg <= (irq_status_reg & ~(reg_wr_data & {{8{reg_wr_strb[3]}}, {8{reg_wr_strb[2]}},
            {8{reg_wr_strb[1]}}, {8{reg_wr_strb[0]}}})) | (irq_events & REG_IRQ_STATUS_MASK);
    end else begin
        irq_status_reg <= irq_status_reg | (irq_events & REG_IRQ_STATUS_MASK);
    end

    control_refused_reg <= control_refused;

    // Errors: events set bits, a written 1 clears them (an event wins).
    if (reg_wr_en && wr_off == REG_ERROR) begin
        error_reg <= (error_reg & ~(reg_wr_data & {{8{reg_wr_strb[3]}}, {8{reg_wr_strb[2]}},
            {8{reg_wr_strb[1]}}, {8{reg_wr_strb[0]}}})) | (error_events & REG_ERROR_MASK);
    end else begin
        error_reg <= error_reg | (error_events & REG_ERROR_MASK);
    end

    // XDMA handshake: an enabled event raises the request, which stays up until acknowledged;
    // an event while it is up is merged into it. The IP sends one interrupt per rising edge,
    // so an event in the very cycle of the acknowledge (which the IP may already have served
    // without it) is kept in irq_again_reg and raises a new request once the acknowledged one
    // has been low for a cycle.
    if (usr_irq_req_reg && usr_irq_ack) begin
        usr_irq_req_reg <= 1'b0;
        irq_again_reg <= (irq_events & irq_enable_reg) != 32'd0;
    end else if (!usr_irq_req_reg && ((irq_events & irq_enable_reg) != 32'd0 || irq_again_reg)) begin
        usr_irq_req_reg <= 1'b1;
        irq_again_reg <= 1'b0;
    end

    if (reg_wr_en) begin
        case (wr_off)
            REG_SCRATCH:        scratch_reg <= reg_update(scratch_reg, reg_wr_data, reg_wr_strb, REG_SCRATCH_MASK);
            REG_CONTROL: begin
                if (control_mode_ok) begin
                    control_reg <= control_new;
                end
            end
            REG_CLEAR:          clear_reg <= reg_wr_strb[0] && reg_wr_data[REG_CLEAR_COUNTERS_LSB];
            REG_SRC0_FRAME_LEN: src0_frame_len_reg <= reg_update(src0_frame_len_reg, reg_wr_data, reg_wr_strb, REG_SRC0_FRAME_LEN_MASK);
            REG_SRC0_GAP:       src0_gap_reg <= reg_update(src0_gap_reg, reg_wr_data, reg_wr_strb, REG_SRC0_GAP_MASK);
            REG_SRC0_PATTERN:   src0_pattern_reg <= reg_update(src0_pattern_reg, reg_wr_data, reg_wr_strb, REG_SRC0_PATTERN_MASK);
            REG_SRC0_SEED:      src0_seed_reg <= reg_update(src0_seed_reg, reg_wr_data, reg_wr_strb, REG_SRC0_SEED_MASK);
            REG_SRC0_POLICY:    src0_policy_reg <= reg_update(src0_policy_reg, reg_wr_data, reg_wr_strb, REG_SRC0_POLICY_MASK);
            REG_SRC1_FRAME_LEN: src1_frame_len_reg <= reg_update(src1_frame_len_reg, reg_wr_data, reg_wr_strb, REG_SRC1_FRAME_LEN_MASK);
            REG_SRC1_GAP:       src1_gap_reg <= reg_update(src1_gap_reg, reg_wr_data, reg_wr_strb, REG_SRC1_GAP_MASK);
            REG_SRC1_PATTERN:   src1_pattern_reg <= reg_update(src1_pattern_reg, reg_wr_data, reg_wr_strb, REG_SRC1_PATTERN_MASK);
            REG_SRC1_SEED:      src1_seed_reg <= reg_update(src1_seed_reg, reg_wr_data, reg_wr_strb, REG_SRC1_SEED_MASK);
            REG_SRC1_POLICY:    src1_policy_reg <= reg_update(src1_policy_reg, reg_wr_data, reg_wr_strb, REG_SRC1_POLICY_MASK);
            REG_CAP_BASE: begin
                cap_base_reg <= reg_update(cap_base_reg, reg_wr_data, reg_wr_strb, REG_CAP_BASE_MASK);
                cap_rptr_reg <= 32'd0;
                cap_ring_reset_reg <= 1'b1;
            end
            REG_CAP_SIZE: begin
                cap_size_reg <= reg_update(cap_size_reg, reg_wr_data, reg_wr_strb, REG_CAP_SIZE_MASK);
                cap_rptr_reg <= 32'd0;
                cap_ring_reset_reg <= 1'b1;
            end
            REG_CAP_RPTR:       cap_rptr_reg <= reg_update(cap_rptr_reg, reg_wr_data, reg_wr_strb, REG_CAP_RPTR_MASK);
            REG_CAP_IRQ_LEVEL:  cap_irq_level_reg <= reg_update(cap_irq_level_reg, reg_wr_data, reg_wr_strb, REG_CAP_IRQ_LEVEL_MASK);
            REG_IRQ_ENABLE:     irq_enable_reg <= reg_update(irq_enable_reg, reg_wr_data, reg_wr_strb, REG_IRQ_ENABLE_MASK);
            default: begin
                // read-only and unmapped words ignore writes
            end
        endcase
    end

    if (rst) begin
        scratch_reg <= REG_SCRATCH_RESET;
        control_reg <= REG_CONTROL_RESET;
        clear_reg <= 1'b0;
        timestamp_reg <= 64'd0;
        src0_frame_len_reg <= REG_SRC0_FRAME_LEN_RESET;
        src0_gap_reg <= REG_SRC0_GAP_RESET;
        src0_pattern_reg <= REG_SRC0_PATTERN_RESET;
        src0_seed_reg <= REG_SRC0_SEED_RESET;
        src0_policy_reg <= REG_SRC0_POLICY_RESET;
        src1_frame_len_reg <= REG_SRC1_FRAME_LEN_RESET;
        src1_gap_reg <= REG_SRC1_GAP_RESET;
        src1_pattern_reg <= REG_SRC1_PATTERN_RESET;
        src1_seed_reg <= REG_SRC1_SEED_RESET;
        src1_policy_reg <= REG_SRC1_POLICY_RESET;
        cap_base_reg <= REG_CAP_BASE_RESET;
        cap_size_reg <= REG_CAP_SIZE_RESET;
        cap_rptr_reg <= REG_CAP_RPTR_RESET;
        cap_irq_level_reg <= REG_CAP_IRQ_LEVEL_RESET;
        cap_ring_reset_reg <= 1'b0;
        irq_enable_reg <= REG_IRQ_ENABLE_RESET;
        irq_status_reg <= REG_IRQ_STATUS_RESET;
        usr_irq_req_reg <= 1'b0;
        irq_again_reg <= 1'b0;
        cap_fill_above_reg <= 1'b0;
        cap_fill_above_now_reg <= 1'b0;
        error_reg <= REG_ERROR_RESET;
        control_refused_reg <= 1'b0;
        timestamp_hi_reg <= 32'd0;
        src0_sent_hi_reg <= 32'd0;
        src0_dropped_hi_reg <= 32'd0;
        src1_sent_hi_reg <= 32'd0;
        src1_dropped_hi_reg <= 32'd0;
        chk_good_hi_reg <= 32'd0;
        chk_bad_hi_reg <= 32'd0;
        chk_missing_hi_reg <= 32'd0;
        cap_overflow_hi_reg <= 32'd0;
        cap_frames_hi_reg <= 32'd0;
    end
end

assign mode = control_reg[REG_CONTROL_MODE_LSB +: REG_CONTROL_MODE_BITS];
assign ch0_en = control_reg[REG_CONTROL_CH0_EN_LSB];
assign ch1_en = control_reg[REG_CONTROL_CH1_EN_LSB];
assign clear = clear_reg;
assign timestamp = timestamp_reg;
assign src0_frame_len = src0_frame_len_reg;
assign src0_gap = src0_gap_reg;
assign src0_pattern = src0_pattern_reg[REG_SRC0_PATTERN_KIND_LSB];
assign src0_seed = src0_seed_reg;
assign src0_drop = src0_policy_reg[REG_SRC0_POLICY_DROP_LSB];
assign src1_frame_len = src1_frame_len_reg;
assign src1_gap = src1_gap_reg;
assign src1_pattern = src1_pattern_reg[REG_SRC1_PATTERN_KIND_LSB];
assign src1_seed = src1_seed_reg;
assign src1_drop = src1_policy_reg[REG_SRC1_POLICY_DROP_LSB];
assign cap_base = cap_base_reg[PTR_WIDTH-1:0];
assign cap_size = cap_size_reg[PTR_WIDTH-1:0];
assign cap_rptr = cap_rptr_reg[PTR_WIDTH-1:0];
assign cap_ring_reset = cap_ring_reset_reg;
assign usr_irq_req = usr_irq_req_reg;

// Byte offsets within a word and address bits above the window are ignored: the window
// repeats across the BAR.
wire unused_addr = (|reg_rd_addr) || (|reg_wr_addr);

endmodule

`resetall
