/*
 * The card's user logic as it sits beside the XDMA IP and the DDR3 controller.
 *
 * - s_axil_*: the user BAR, a register file whose map comes from hdl/regs.toml through the
 *   generated include card_regs.vh (documented in docs/register-map.md).
 * - s_axi_*: the DMA engine's memory-mapped master; with the capture writer it shares the DDR
 *   port m_axi_ddr_* through axi_mm_path (arbiter, 128 -> 512 bits, axi_aclk -> ddr_clk).
 * - Streams, by CONTROL.MODE: LOOP (H2C0 -> C2H0), GEN (frame source 0 -> C2H0, frame source
 *   1 -> C2H1), ECHO (one frame of source 0 on C2H0 per H2C0 frame, carrying its sequence
 *   number), CHECK (H2C0 -> checker), CAPTURE (frame source 0 -> capture ring in DDR).
 * - usr_irq_req/usr_irq_ack: the XDMA user interrupt handshake.
 *
 * Every stream port passes through a register slice, so all stream outputs are registered and
 * LOOP moves one beat per cycle with no bubble while both sides are ready.
 *
 * Variants (VARIANT): one XDMA instance is either memory-mapped or stream for all its
 * channels, so the card is built as one of
 * - 1, mm: s_axi and the DDR port (axi_mm_path), the capture writer fed by frame source 0;
 *   modes OFF and CAPTURE. The stream ports are tied off (no beat is taken or offered).
 * - 2, stream: H2C0, C2H0 and C2H1 with both frame sources and the checker; modes OFF, LOOP,
 *   GEN, ECHO and CHECK. s_axi and the DDR port are tied off (never ready, never valid).
 * - 3, combined: both side by side, for simulation only (an initial check stops a synthesis
 *   that asks for it).
 * The CAPS register says which, so host software can skip what a build lacks; a CONTROL write
 * with a mode the build lacks is refused (SLVERR, ERROR.MODE).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module card_core #
(
    // Which XDMA configuration the card is built for: 1 memory-mapped (H2C/C2H to DDR, the
    // frame source writing the capture ring), 2 stream (H2C0, C2H0, C2H1), 3 both side by
    // side (simulation only: no single XDMA instance has both)
    parameter VARIANT = 3,
    // Width of the user BAR byte address in bits (the BAR is 2**AXIL_ADDR_WIDTH bytes)
    parameter AXIL_ADDR_WIDTH = 16,
    // Width of the DMA memory-mapped data bus in bits
    parameter AXI_DATA_WIDTH = 128,
    // Width of the DMA memory-mapped address bus in bits
    parameter AXI_ADDR_WIDTH = 64,
    // Width of the DMA memory-mapped ID in bits
    parameter AXI_ID_WIDTH = 4,
    // Width of the stream data in bits (the frame source and checker work on 128 bits)
    parameter AXIS_DATA_WIDTH = 128,
    // Width of the DDR controller data bus in bits
    parameter DDR_DATA_WIDTH = 512,
    // Width of the DDR controller address bus in bits (2 GiB)
    parameter DDR_ADDR_WIDTH = 31,
    // Width of the DDR controller ID in bits (one more than AXI_ID_WIDTH: capture vs. DMA)
    parameter DDR_ID_WIDTH = AXI_ID_WIDTH + 1,
    // Value of the read-only identifier register: ASCII "DAQ1"
    parameter [31:0] CARD_ID = 32'h4441_5131,
    // Value of the read-only version register: major in [31:16], minor in [15:0]
    parameter [31:0] CARD_VERSION = 32'h0000_0003,
    // Deliberate faults for the host suite's broken-card tests (crates/card-tests), 0 in every
    // real build: the read width converter drops a beat (axi_rd_upsizer's FAULT_DROP_BEAT)
    parameter FAULT_RD_DROP_BEAT = 0,
    // ... and the frame sources repeat a sequence number every N frames (frame_source's
    // FAULT_SEQ_REPEAT)
    parameter FAULT_SEQ_REPEAT = 0
)
(
    input  wire                          axi_aclk,
    input  wire                          axi_aresetn,

    /*
     * AXI4 slave: the DMA engine's memory-mapped master
     */
    input  wire [AXI_ID_WIDTH-1:0]       s_axi_awid,
    input  wire [AXI_ADDR_WIDTH-1:0]     s_axi_awaddr,
    input  wire [7:0]                    s_axi_awlen,
    input  wire [2:0]                    s_axi_awsize,
    input  wire [1:0]                    s_axi_awburst,
    input  wire                          s_axi_awlock,
    input  wire [3:0]                    s_axi_awcache,
    input  wire [2:0]                    s_axi_awprot,
    input  wire                          s_axi_awvalid,
    output wire                          s_axi_awready,
    input  wire [AXI_DATA_WIDTH-1:0]     s_axi_wdata,
    input  wire [AXI_DATA_WIDTH/8-1:0]   s_axi_wstrb,
    input  wire                          s_axi_wlast,
    input  wire                          s_axi_wvalid,
    output wire                          s_axi_wready,
    output wire [AXI_ID_WIDTH-1:0]       s_axi_bid,
    output wire [1:0]                    s_axi_bresp,
    output wire                          s_axi_bvalid,
    input  wire                          s_axi_bready,
    input  wire [AXI_ID_WIDTH-1:0]       s_axi_arid,
    input  wire [AXI_ADDR_WIDTH-1:0]     s_axi_araddr,
    input  wire [7:0]                    s_axi_arlen,
    input  wire [2:0]                    s_axi_arsize,
    input  wire [1:0]                    s_axi_arburst,
    input  wire                          s_axi_arlock,
    input  wire [3:0]                    s_axi_arcache,
    input  wire [2:0]                    s_axi_arprot,
    input  wire                          s_axi_arvalid,
    output wire                          s_axi_arready,
    output wire [AXI_ID_WIDTH-1:0]       s_axi_rid,
    output wire [AXI_DATA_WIDTH-1:0]     s_axi_rdata,
    output wire [1:0]                    s_axi_rresp,
    output wire                          s_axi_rlast,
    output wire                          s_axi_rvalid,
    input  wire                          s_axi_rready,

    /*
     * AXI4-Lite slave: the user BAR
     */
    input  wire [AXIL_ADDR_WIDTH-1:0]    s_axil_awaddr,
    input  wire [2:0]                    s_axil_awprot,
    input  wire                          s_axil_awvalid,
    output wire                          s_axil_awready,
    input  wire [31:0]                   s_axil_wdata,
    input  wire [3:0]                    s_axil_wstrb,
    input  wire                          s_axil_wvalid,
    output wire                          s_axil_wready,
    output wire [1:0]                    s_axil_bresp,
    output wire                          s_axil_bvalid,
    input  wire                          s_axil_bready,
    input  wire [AXIL_ADDR_WIDTH-1:0]    s_axil_araddr,
    input  wire [2:0]                    s_axil_arprot,
    input  wire                          s_axil_arvalid,
    output wire                          s_axil_arready,
    output wire [31:0]                   s_axil_rdata,
    output wire [1:0]                    s_axil_rresp,
    output wire                          s_axil_rvalid,
    input  wire                          s_axil_rready,

    /*
     * AXI-Stream from the host (H2C channel 0)
     */
    input  wire [AXIS_DATA_WIDTH-1:0]    s_axis_h2c0_tdata,
    input  wire [AXIS_DATA_WIDTH/8-1:0]  s_axis_h2c0_tkeep,
    input  wire                          s_axis_h2c0_tlast,
    input  wire                          s_axis_h2c0_tvalid,
    output wire                          s_axis_h2c0_tready,

    /*
     * AXI-Stream to the host (C2H channels 0 and 1)
     */
    output wire [AXIS_DATA_WIDTH-1:0]    m_axis_c2h0_tdata,
    output wire [AXIS_DATA_WIDTH/8-1:0]  m_axis_c2h0_tkeep,
    output wire                          m_axis_c2h0_tlast,
    output wire                          m_axis_c2h0_tvalid,
    input  wire                          m_axis_c2h0_tready,
    output wire [AXIS_DATA_WIDTH-1:0]    m_axis_c2h1_tdata,
    output wire [AXIS_DATA_WIDTH/8-1:0]  m_axis_c2h1_tkeep,
    output wire                          m_axis_c2h1_tlast,
    output wire                          m_axis_c2h1_tvalid,
    input  wire                          m_axis_c2h1_tready,

    /*
     * User interrupt (XDMA handshake: the request is held until acknowledged)
     */
    output wire                          usr_irq_req,
    input  wire                          usr_irq_ack,

    /*
     * DDR controller user clock and its synchronous reset (active high)
     */
    input  wire                          ddr_clk,
    input  wire                          ddr_rst,

    /*
     * AXI4 master to the DDR controller (ddr_clk domain)
     */
    output wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_awid,
    output wire [DDR_ADDR_WIDTH-1:0]     m_axi_ddr_awaddr,
    output wire [7:0]                    m_axi_ddr_awlen,
    output wire [2:0]                    m_axi_ddr_awsize,
    output wire [1:0]                    m_axi_ddr_awburst,
    output wire                          m_axi_ddr_awlock,
    output wire [3:0]                    m_axi_ddr_awcache,
    output wire [2:0]                    m_axi_ddr_awprot,
    output wire                          m_axi_ddr_awvalid,
    input  wire                          m_axi_ddr_awready,
    output wire [DDR_DATA_WIDTH-1:0]     m_axi_ddr_wdata,
    output wire [DDR_DATA_WIDTH/8-1:0]   m_axi_ddr_wstrb,
    output wire                          m_axi_ddr_wlast,
    output wire                          m_axi_ddr_wvalid,
    input  wire                          m_axi_ddr_wready,
    input  wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_bid,
    input  wire [1:0]                    m_axi_ddr_bresp,
    input  wire                          m_axi_ddr_bvalid,
    output wire                          m_axi_ddr_bready,
    output wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_arid,
    output wire [DDR_ADDR_WIDTH-1:0]     m_axi_ddr_araddr,
    output wire [7:0]                    m_axi_ddr_arlen,
    output wire [2:0]                    m_axi_ddr_arsize,
    output wire [1:0]                    m_axi_ddr_arburst,
    output wire                          m_axi_ddr_arlock,
    output wire [3:0]                    m_axi_ddr_arcache,
    output wire [2:0]                    m_axi_ddr_arprot,
    output wire                          m_axi_ddr_arvalid,
    input  wire                          m_axi_ddr_arready,
    input  wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_rid,
    input  wire [DDR_DATA_WIDTH-1:0]     m_axi_ddr_rdata,
    input  wire [1:0]                    m_axi_ddr_rresp,
    input  wire                          m_axi_ddr_rlast,
    input  wire                          m_axi_ddr_rvalid,
    output wire                          m_axi_ddr_rready
);

// The generated map declares a localparam for every register, field and value; this file
// uses only those it decodes, so the unused ones are expected.
/* verilator lint_off UNUSEDPARAM */
`include "card_regs.vh"
/* verilator lint_on UNUSEDPARAM */

localparam AXIS_KEEP_WIDTH = AXIS_DATA_WIDTH/8;
localparam CAP_PTR_WIDTH = 31;

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

`ifdef SYNTHESIS
    if (VARIANT == 3) begin
        $error("Error: VARIANT 3 (memory-mapped and stream channels side by side) exists in simulation only; no single XDMA instance has both (instance %m)");
        $finish;
    end
`endif

    if (AXIL_ADDR_WIDTH < REGS_WINDOW_BITS) begin
        $error("Error: the user BAR must hold the register window, AXIL_ADDR_WIDTH >= %0d (instance %m)", REGS_WINDOW_BITS);
        $finish;
    end

    if (AXIS_DATA_WIDTH != 128 || AXI_DATA_WIDTH != 128) begin
        $error("Error: the frame source, checker and capture writer work on 128-bit data (instance %m)");
        $finish;
    end

    if (DDR_ID_WIDTH != AXI_ID_WIDTH + 1 || DDR_ADDR_WIDTH > CAP_PTR_WIDTH) begin
        $error("Error: DDR_ID_WIDTH must be AXI_ID_WIDTH + 1 and DDR_ADDR_WIDTH at most 31 (instance %m)");
        $finish;
    end
end

// The XDMA IP gives an active-low reset synchronous to axi_aclk.
wire rst = !axi_aresetn;

/*
 * Register file
 */

wire [AXIL_ADDR_WIDTH-1:0] reg_wr_addr;
wire [31:0] reg_wr_data;
wire [3:0] reg_wr_strb;
wire reg_wr_en;
wire [AXIL_ADDR_WIDTH-1:0] reg_rd_addr;
wire reg_rd_en;
// The read multiplexer's answer (see below): axil_reg_if takes it three cycles after reg_rd_en.
reg [31:0] reg_rd_data_reg = 32'd0;
wire reg_wr_err;

axil_reg_if #(
    .RD_LATENCY(3),
    .DATA_WIDTH(32),
    .ADDR_WIDTH(AXIL_ADDR_WIDTH)
)
axil_reg_if_inst (
    .clk(axi_aclk),
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

// Clamps a frame length register to the 64 B .. 64 KiB that the frame source supports.
function [16:0] clamp_len(input [31:0] len);
    begin
        if (len < 32'd64) begin
            clamp_len = 17'd64;
        end else if (len > 32'd65536) begin
            clamp_len = 17'd65536;
        end else begin
            clamp_len = len[16:0];
        end
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

wire [2:0] mode = control_reg[REG_CONTROL_MODE_LSB +: REG_CONTROL_MODE_BITS];
wire ch0_en = control_reg[REG_CONTROL_CH0_EN_LSB];
wire ch1_en = control_reg[REG_CONTROL_CH1_EN_LSB];

wire mode_loop = mode == REG_CONTROL_MODE_LOOP;
wire mode_gen = mode == REG_CONTROL_MODE_GEN;
wire mode_echo = mode == REG_CONTROL_MODE_ECHO;
wire mode_check = mode == REG_CONTROL_MODE_CHECK;
wire mode_capture = mode == REG_CONTROL_MODE_CAPTURE;

// Status from the blocks below.
wire src0_clearing;
wire src0_clear_tail;
wire src1_clearing;
wire src1_clear_tail;
wire [31:0] src_status = {22'd0, src1_clear_tail, src1_clearing, 6'd0, src0_clear_tail,
    src0_clearing};
wire [63:0] src0_frames_sent;
wire [63:0] src0_frames_dropped;
wire [63:0] src1_frames_sent;
wire [63:0] src1_frames_dropped;
wire [63:0] chk_frames_good;
wire [63:0] chk_frames_bad;
wire [63:0] chk_frames_missing;
wire [31:0] chk_err_magic;
wire [31:0] chk_err_length;
wire [31:0] chk_err_crc;
wire [31:0] chk_err_version;
wire [31:0] chk_last_seq;
wire [CAP_PTR_WIDTH-1:0] cap_wptr;
wire [CAP_PTR_WIDTH-1:0] cap_fill;
wire [63:0] cap_overflow_count;
wire cap_overflow_event;
wire [63:0] cap_frame_count;


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
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[39]}} & {1'b0, cap_wptr});
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[40]}} & cap_rptr_reg);
    rd_parts[32*3 +: 32] = rd_parts[32*3 +: 32] | ({32{rd_sel_reg[41]}} & {1'b0, cap_fill});
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

always @(posedge axi_aclk) begin
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
wire cap_ring_error;
wire dma_addr_error;
wire dma_burst_error;
// A refused CONTROL write sets its ERROR bit a cycle later, from a register: the write's
// decode and the mode check take most of the cycle already (its SLVERR needs them at once).
reg control_refused_reg = 1'b0;
wire [31:0] error_events = {28'd0, dma_burst_error, dma_addr_error, cap_ring_error,
    control_refused_reg};

// Fill level event: CAP_FILL rose to or above a non-zero CAP_IRQ_LEVEL.
wire cap_fill_above = cap_irq_level_reg != 32'd0 && {1'b0, cap_fill} >= cap_irq_level_reg;
wire [31:0] irq_events = {30'd0, cap_overflow_event,
    cap_fill_above_now_reg && !cap_fill_above_reg};

always @(posedge axi_aclk) begin
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

assign usr_irq_req = usr_irq_req_reg;

/*
 * Streams
 */

// H2C0 after its register slice.
wire [AXIS_DATA_WIDTH-1:0] h2c_tdata;
wire [AXIS_KEEP_WIDTH-1:0] h2c_tkeep;
wire h2c_tlast;
wire h2c_tvalid;
wire h2c_tready;

// Frame source outputs.
wire [AXIS_DATA_WIDTH-1:0] src0_tdata;
wire [AXIS_KEEP_WIDTH-1:0] src0_tkeep;
wire src0_tlast;
wire src0_tvalid;
wire src0_tready;
wire [AXIS_DATA_WIDTH-1:0] src1_tdata;
wire [AXIS_KEEP_WIDTH-1:0] src1_tkeep;
wire src1_tlast;
wire src1_tvalid;
wire src1_tready;

// C2H inputs of the output register slices.
wire [AXIS_DATA_WIDTH-1:0] c2h0_tdata;
wire [AXIS_KEEP_WIDTH-1:0] c2h0_tkeep;
wire c2h0_tlast;
wire c2h0_tvalid;
wire c2h0_tready;
wire c2h1_tready;

// Checker and capture writer inputs.
wire chk_tvalid;
wire chk_tready;
wire cap_tvalid;
wire cap_tready;

// The mode selects the paths; it is static while the streams run, so these multiplexers are
// plain selections between register slices and the sources' registered outputs.
assign c2h0_tdata = mode_loop ? h2c_tdata : src0_tdata;
assign c2h0_tkeep = mode_loop ? h2c_tkeep : src0_tkeep;
assign c2h0_tlast = mode_loop ? h2c_tlast : src0_tlast;
assign c2h0_tvalid = mode_loop ? h2c_tvalid : ((mode_gen || mode_echo) && src0_tvalid);

assign chk_tvalid = (mode_check || mode_echo) && h2c_tvalid;
assign cap_tvalid = mode_capture && src0_tvalid;

// H2C0 beats that no mode consumes are accepted and discarded, so the host's transfer never
// hangs on a card that is not listening.
assign h2c_tready = mode_loop ? c2h0_tready
    : ((mode_check || mode_echo) ? chk_tready : 1'b1);
assign src0_tready = ((mode_gen || mode_echo) && c2h0_tready) || (mode_capture && cap_tready);
assign src1_tready = mode_gen && c2h1_tready;

generate
    if (STREAM_EN) begin : stream_slices_g
    axis_skid_buffer #(
        .DATA_WIDTH(AXIS_DATA_WIDTH)
    )
    h2c0_slice_inst (
        .clk(axi_aclk),
        .rst(rst),
        .s_axis_tdata(s_axis_h2c0_tdata),
        .s_axis_tkeep(s_axis_h2c0_tkeep),
        .s_axis_tlast(s_axis_h2c0_tlast),
        .s_axis_tvalid(s_axis_h2c0_tvalid),
        .s_axis_tready(s_axis_h2c0_tready),
        .m_axis_tdata(h2c_tdata),
        .m_axis_tkeep(h2c_tkeep),
        .m_axis_tlast(h2c_tlast),
        .m_axis_tvalid(h2c_tvalid),
        .m_axis_tready(h2c_tready)
    );

    axis_skid_buffer #(
        .DATA_WIDTH(AXIS_DATA_WIDTH)
    )
    c2h0_slice_inst (
        .clk(axi_aclk),
        .rst(rst),
        .s_axis_tdata(c2h0_tdata),
        .s_axis_tkeep(c2h0_tkeep),
        .s_axis_tlast(c2h0_tlast),
        .s_axis_tvalid(c2h0_tvalid),
        .s_axis_tready(c2h0_tready),
        .m_axis_tdata(m_axis_c2h0_tdata),
        .m_axis_tkeep(m_axis_c2h0_tkeep),
        .m_axis_tlast(m_axis_c2h0_tlast),
        .m_axis_tvalid(m_axis_c2h0_tvalid),
        .m_axis_tready(m_axis_c2h0_tready)
    );

    axis_skid_buffer #(
        .DATA_WIDTH(AXIS_DATA_WIDTH)
    )
    c2h1_slice_inst (
        .clk(axi_aclk),
        .rst(rst),
        .s_axis_tdata(src1_tdata),
        .s_axis_tkeep(src1_tkeep),
        .s_axis_tlast(src1_tlast),
        .s_axis_tvalid(mode_gen && src1_tvalid),
        .s_axis_tready(c2h1_tready),
        .m_axis_tdata(m_axis_c2h1_tdata),
        .m_axis_tkeep(m_axis_c2h1_tkeep),
        .m_axis_tlast(m_axis_c2h1_tlast),
        .m_axis_tvalid(m_axis_c2h1_tvalid),
        .m_axis_tready(m_axis_c2h1_tready)
    );
    end else begin : no_stream_slices_g
        // The mm variant: the stream ports are tied off; nothing is taken or offered.
        assign s_axis_h2c0_tready = 1'b0;
        assign h2c_tdata = {AXIS_DATA_WIDTH{1'b0}};
        assign h2c_tkeep = {AXIS_KEEP_WIDTH{1'b0}};
        assign h2c_tlast = 1'b0;
        assign h2c_tvalid = 1'b0;
        assign c2h0_tready = 1'b0;
        assign c2h1_tready = 1'b0;
        assign m_axis_c2h0_tdata = {AXIS_DATA_WIDTH{1'b0}};
        assign m_axis_c2h0_tkeep = {AXIS_KEEP_WIDTH{1'b0}};
        assign m_axis_c2h0_tlast = 1'b0;
        assign m_axis_c2h0_tvalid = 1'b0;
        assign m_axis_c2h1_tdata = {AXIS_DATA_WIDTH{1'b0}};
        assign m_axis_c2h1_tkeep = {AXIS_KEEP_WIDTH{1'b0}};
        assign m_axis_c2h1_tlast = 1'b0;
        assign m_axis_c2h1_tvalid = 1'b0;
        // The tied-off ports' inputs and the H2C and C2H1 sides of the mode multiplexers.
        wire unused_stream = &{1'b0, s_axis_h2c0_tdata, s_axis_h2c0_tkeep, s_axis_h2c0_tlast,
            s_axis_h2c0_tvalid, m_axis_c2h0_tready, m_axis_c2h1_tready, h2c_tready, c2h0_tdata,
            c2h0_tkeep, c2h0_tlast, c2h0_tvalid, src1_tdata, src1_tkeep, src1_tlast, src1_tvalid,
            1'b0};
    end
endgenerate

/*
 * Frame sources and checker
 */

// CLEAR.COUNTERS restarts the sources: their counters and sequence numbers return to zero,
// each at a frame boundary of its stream (a frame in flight finishes first, SRC_STATUS).

// ECHO: a finished H2C frame asks source 0 for one frame carrying the request's sequence
// number; the request waits here until the source can take it.
wire chk_frame_done;
wire [31:0] chk_frame_seq;
wire chk_frame_ok;
wire src0_send_ready;
wire src1_send_ready;
reg echo_pending_reg = 1'b0;
reg [31:0] echo_seq_reg = 32'd0;
wire echo_send = echo_pending_reg && src0_send_ready;

always @(posedge axi_aclk) begin
    if (mode_echo && chk_frame_done) begin
        echo_pending_reg <= 1'b1;
        echo_seq_reg <= chk_frame_seq;
    end else if (echo_send) begin
        echo_pending_reg <= 1'b0;
    end

    if (rst || !mode_echo) begin
        echo_pending_reg <= 1'b0;
    end
end

frame_source #(
    .FAULT_SEQ_REPEAT(FAULT_SEQ_REPEAT)
)
frame_source_0_inst (
    .clk(axi_aclk),
    .rst(rst),
    .clear(clear_reg),
    .enable(ch0_en && (mode_gen || mode_capture)),
    .channel(8'd0),
    .frame_len(clamp_len(src0_frame_len_reg)),
    .gap_cycles(src0_gap_reg),
    .pattern(src0_pattern_reg[REG_SRC0_PATTERN_KIND_LSB]),
    .seed(src0_seed_reg),
    .drop_policy(src0_policy_reg[REG_SRC0_POLICY_DROP_LSB]),
    .timestamp(timestamp_reg),
    .oneshot(mode_echo),
    .send(echo_send),
    .send_seq(echo_seq_reg),
    .m_axis_tdata(src0_tdata),
    .m_axis_tkeep(src0_tkeep),
    .m_axis_tlast(src0_tlast),
    .m_axis_tvalid(src0_tvalid),
    .m_axis_tready(src0_tready),
    .frames_sent(src0_frames_sent),
    .frames_dropped(src0_frames_dropped),
    .send_ready(src0_send_ready),
    .clearing(src0_clearing),
    .clear_tail(src0_clear_tail)
);

generate
    if (STREAM_EN) begin : stream_blocks_g
    frame_source #(
        .FAULT_SEQ_REPEAT(FAULT_SEQ_REPEAT)
    )
    frame_source_1_inst (
        .clk(axi_aclk),
        .rst(rst),
        .clear(clear_reg),
        .enable(ch1_en && mode_gen),
        .channel(8'd1),
        .frame_len(clamp_len(src1_frame_len_reg)),
        .gap_cycles(src1_gap_reg),
        .pattern(src1_pattern_reg[REG_SRC1_PATTERN_KIND_LSB]),
        .seed(src1_seed_reg),
        .drop_policy(src1_policy_reg[REG_SRC1_POLICY_DROP_LSB]),
        .timestamp(timestamp_reg),
        .oneshot(1'b0),
        .send(1'b0),
        .send_seq(32'd0),
        .m_axis_tdata(src1_tdata),
        .m_axis_tkeep(src1_tkeep),
        .m_axis_tlast(src1_tlast),
        .m_axis_tvalid(src1_tvalid),
        .m_axis_tready(src1_tready),
        .frames_sent(src1_frames_sent),
        .frames_dropped(src1_frames_dropped),
        .send_ready(src1_send_ready),
        .clearing(src1_clearing),
        .clear_tail(src1_clear_tail)
    );

    frame_checker
    frame_checker_inst (
        .clk(axi_aclk),
        .rst(rst),
        .clear(clear_reg),
        .s_axis_tdata(h2c_tdata),
        .s_axis_tkeep(h2c_tkeep),
        .s_axis_tlast(h2c_tlast),
        .s_axis_tvalid(chk_tvalid),
        .s_axis_tready(chk_tready),
        .frames_good(chk_frames_good),
        .frames_bad(chk_frames_bad),
        .frames_missing(chk_frames_missing),
        .err_magic(chk_err_magic),
        .err_length(chk_err_length),
        .err_crc(chk_err_crc),
        .err_version(chk_err_version),
        .last_seq(chk_last_seq),
        .frame_done(chk_frame_done),
        .frame_seq(chk_frame_seq),
        .frame_ok(chk_frame_ok)
    );
    end else begin : no_stream_blocks_g
        // No source 1 and no checker without stream channels.
        assign src1_tdata = {AXIS_DATA_WIDTH{1'b0}};
        assign src1_tkeep = {AXIS_KEEP_WIDTH{1'b0}};
        assign src1_tlast = 1'b0;
        assign src1_tvalid = 1'b0;
        assign src1_frames_sent = 64'd0;
        assign src1_frames_dropped = 64'd0;
        assign src1_send_ready = 1'b0;
        assign src1_clearing = 1'b0;
        assign src1_clear_tail = 1'b0;
        assign chk_tready = 1'b1;
        assign chk_frames_good = 64'd0;
        assign chk_frames_bad = 64'd0;
        assign chk_frames_missing = 64'd0;
        assign chk_err_magic = 32'd0;
        assign chk_err_length = 32'd0;
        assign chk_err_crc = 32'd0;
        assign chk_err_version = 32'd0;
        assign chk_last_seq = 32'd0;
        assign chk_frame_done = 1'b0;
        assign chk_frame_seq = 32'd0;
        assign chk_frame_ok = 1'b0;
        // The source 1 settings and the checker's inputs have no user in this variant.
        wire unused_blocks = &{1'b0, src1_frame_len_reg, src1_gap_reg, src1_pattern_reg,
            src1_seed_reg, src1_policy_reg, src1_tready, chk_tvalid, ch1_en, 1'b0};
    end
endgenerate

/*
 * Capture ring and the memory-mapped path to DDR
 */

wire [63:0] cap_bresp_error_count;
wire cap_busy;

generate
    if (MM_EN) begin : mm_g
        // The capture writer's write-only master.
        wire [AXI_ADDR_WIDTH-1:0] cap_axi_awaddr;
        wire [7:0] cap_axi_awlen;
        wire [2:0] cap_axi_awsize;
        wire [1:0] cap_axi_awburst;
        wire cap_axi_awvalid;
        wire cap_axi_awready;
        wire [AXI_DATA_WIDTH-1:0] cap_axi_wdata;
        wire [AXI_DATA_WIDTH/8-1:0] cap_axi_wstrb;
        wire cap_axi_wlast;
        wire cap_axi_wvalid;
        wire cap_axi_wready;
        wire [1:0] cap_axi_bresp;
        wire cap_axi_bvalid;
        wire cap_axi_bready;

        // The frame source's beats reach the capture writer through a register slice: the
        // source's FIFO drives them straight from block RAM, whose clock-to-out leaves too
        // little of the cycle for the writer's descriptor count and room check. A clear
        // leaves it alone: the source ends a frame in flight through it before restarting.
        wire [AXIS_DATA_WIDTH-1:0] cap_tdata;
        wire [AXIS_KEEP_WIDTH-1:0] cap_tkeep;
        wire cap_tlast;
        wire cap_slice_tvalid;
        wire cap_slice_tready;

    axis_skid_buffer #(
        .DATA_WIDTH(AXIS_DATA_WIDTH)
    )
    cap_slice_inst (
        .clk(axi_aclk),
        .rst(rst),
        .s_axis_tdata(src0_tdata),
        .s_axis_tkeep(src0_tkeep),
        .s_axis_tlast(src0_tlast),
        .s_axis_tvalid(cap_tvalid),
        .s_axis_tready(cap_tready),
        .m_axis_tdata(cap_tdata),
        .m_axis_tkeep(cap_tkeep),
        .m_axis_tlast(cap_tlast),
        .m_axis_tvalid(cap_slice_tvalid),
        .m_axis_tready(cap_slice_tready)
    );

    capture_writer #(
        .DATA_WIDTH(AXI_DATA_WIDTH),
        .ADDR_WIDTH(AXI_ADDR_WIDTH),
        .PTR_WIDTH(CAP_PTR_WIDTH),
        .FRAME_LEN_WIDTH(17)
    )
    capture_writer_inst (
        .clk(axi_aclk),
        .rst(rst),
        .ring_base(cap_base_reg[CAP_PTR_WIDTH-1:0]),
        .ring_size(cap_size_reg[CAP_PTR_WIDTH-1:0]),
        .rptr(cap_rptr_reg[CAP_PTR_WIDTH-1:0]),
        .frame_bytes(clamp_len(src0_frame_len_reg)),
        .ring_reset(cap_ring_reset_reg),
        .clear_counters(clear_reg),
        .s_axis_tdata(cap_tdata),
        .s_axis_tkeep(cap_tkeep),
        .s_axis_tlast(cap_tlast),
        .s_axis_tvalid(cap_slice_tvalid),
        .s_axis_tready(cap_slice_tready),
        .m_axi_awaddr(cap_axi_awaddr),
        .m_axi_awlen(cap_axi_awlen),
        .m_axi_awsize(cap_axi_awsize),
        .m_axi_awburst(cap_axi_awburst),
        .m_axi_awvalid(cap_axi_awvalid),
        .m_axi_awready(cap_axi_awready),
        .m_axi_wdata(cap_axi_wdata),
        .m_axi_wstrb(cap_axi_wstrb),
        .m_axi_wlast(cap_axi_wlast),
        .m_axi_wvalid(cap_axi_wvalid),
        .m_axi_wready(cap_axi_wready),
        .m_axi_bresp(cap_axi_bresp),
        .m_axi_bvalid(cap_axi_bvalid),
        .m_axi_bready(cap_axi_bready),
        .wptr(cap_wptr),
        .fill(cap_fill),
        .overflow_count(cap_overflow_count),
        .overflow_event(cap_overflow_event),
        .frame_count(cap_frame_count),
        .bresp_error_count(cap_bresp_error_count),
        .busy(cap_busy),
        .ring_error(cap_ring_error)
    );

    axi_mm_path #(
        .DATA_WIDTH(AXI_DATA_WIDTH),
        .ADDR_WIDTH(AXI_ADDR_WIDTH),
        .ID_WIDTH(AXI_ID_WIDTH),
        .DDR_DATA_WIDTH(DDR_DATA_WIDTH),
        .DDR_ADDR_WIDTH(DDR_ADDR_WIDTH),
        .DDR_ID_WIDTH(DDR_ID_WIDTH),
        .FAULT_RD_DROP_BEAT(FAULT_RD_DROP_BEAT)
    )
    axi_mm_path_inst (
        .clk(axi_aclk),
        .rst(rst),
        .ddr_clk(ddr_clk),
        .ddr_rst(ddr_rst),
        .s_axi_awid(s_axi_awid),
        .s_axi_awaddr(s_axi_awaddr),
        .s_axi_awlen(s_axi_awlen),
        .s_axi_awsize(s_axi_awsize),
        .s_axi_awburst(s_axi_awburst),
        .s_axi_awlock(s_axi_awlock),
        .s_axi_awcache(s_axi_awcache),
        .s_axi_awprot(s_axi_awprot),
        .s_axi_awvalid(s_axi_awvalid),
        .s_axi_awready(s_axi_awready),
        .s_axi_wdata(s_axi_wdata),
        .s_axi_wstrb(s_axi_wstrb),
        .s_axi_wlast(s_axi_wlast),
        .s_axi_wvalid(s_axi_wvalid),
        .s_axi_wready(s_axi_wready),
        .s_axi_bid(s_axi_bid),
        .s_axi_bresp(s_axi_bresp),
        .s_axi_bvalid(s_axi_bvalid),
        .s_axi_bready(s_axi_bready),
        .s_axi_arid(s_axi_arid),
        .s_axi_araddr(s_axi_araddr),
        .s_axi_arlen(s_axi_arlen),
        .s_axi_arsize(s_axi_arsize),
        .s_axi_arburst(s_axi_arburst),
        .s_axi_arlock(s_axi_arlock),
        .s_axi_arcache(s_axi_arcache),
        .s_axi_arprot(s_axi_arprot),
        .s_axi_arvalid(s_axi_arvalid),
        .s_axi_arready(s_axi_arready),
        .s_axi_rid(s_axi_rid),
        .s_axi_rdata(s_axi_rdata),
        .s_axi_rresp(s_axi_rresp),
        .s_axi_rlast(s_axi_rlast),
        .s_axi_rvalid(s_axi_rvalid),
        .s_axi_rready(s_axi_rready),
        .s_axi_cap_awaddr(cap_axi_awaddr),
        .s_axi_cap_awlen(cap_axi_awlen),
        .s_axi_cap_awsize(cap_axi_awsize),
        .s_axi_cap_awburst(cap_axi_awburst),
        .s_axi_cap_awvalid(cap_axi_awvalid),
        .s_axi_cap_awready(cap_axi_awready),
        .s_axi_cap_wdata(cap_axi_wdata),
        .s_axi_cap_wstrb(cap_axi_wstrb),
        .s_axi_cap_wlast(cap_axi_wlast),
        .s_axi_cap_wvalid(cap_axi_wvalid),
        .s_axi_cap_wready(cap_axi_wready),
        .s_axi_cap_bresp(cap_axi_bresp),
        .s_axi_cap_bvalid(cap_axi_bvalid),
        .s_axi_cap_bready(cap_axi_bready),
        .m_axi_ddr_awid(m_axi_ddr_awid),
        .m_axi_ddr_awaddr(m_axi_ddr_awaddr),
        .m_axi_ddr_awlen(m_axi_ddr_awlen),
        .m_axi_ddr_awsize(m_axi_ddr_awsize),
        .m_axi_ddr_awburst(m_axi_ddr_awburst),
        .m_axi_ddr_awlock(m_axi_ddr_awlock),
        .m_axi_ddr_awcache(m_axi_ddr_awcache),
        .m_axi_ddr_awprot(m_axi_ddr_awprot),
        .m_axi_ddr_awvalid(m_axi_ddr_awvalid),
        .m_axi_ddr_awready(m_axi_ddr_awready),
        .m_axi_ddr_wdata(m_axi_ddr_wdata),
        .m_axi_ddr_wstrb(m_axi_ddr_wstrb),
        .m_axi_ddr_wlast(m_axi_ddr_wlast),
        .m_axi_ddr_wvalid(m_axi_ddr_wvalid),
        .m_axi_ddr_wready(m_axi_ddr_wready),
        .m_axi_ddr_bid(m_axi_ddr_bid),
        .m_axi_ddr_bresp(m_axi_ddr_bresp),
        .m_axi_ddr_bvalid(m_axi_ddr_bvalid),
        .m_axi_ddr_bready(m_axi_ddr_bready),
        .m_axi_ddr_arid(m_axi_ddr_arid),
        .m_axi_ddr_araddr(m_axi_ddr_araddr),
        .m_axi_ddr_arlen(m_axi_ddr_arlen),
        .m_axi_ddr_arsize(m_axi_ddr_arsize),
        .m_axi_ddr_arburst(m_axi_ddr_arburst),
        .m_axi_ddr_arlock(m_axi_ddr_arlock),
        .m_axi_ddr_arcache(m_axi_ddr_arcache),
        .m_axi_ddr_arprot(m_axi_ddr_arprot),
        .m_axi_ddr_arvalid(m_axi_ddr_arvalid),
        .m_axi_ddr_arready(m_axi_ddr_arready),
        .m_axi_ddr_rid(m_axi_ddr_rid),
        .m_axi_ddr_rdata(m_axi_ddr_rdata),
        .m_axi_ddr_rresp(m_axi_ddr_rresp),
        .m_axi_ddr_rlast(m_axi_ddr_rlast),
        .m_axi_ddr_rvalid(m_axi_ddr_rvalid),
        .m_axi_ddr_rready(m_axi_ddr_rready),
        .addr_error(dma_addr_error),
        .burst_error(dma_burst_error)
    );
    end else begin : no_mm_g
        // The stream variant: no DDR path. s_axi is never ready and never answers, the DDR
        // port never asks, and capture takes nothing.
        assign cap_tready = 1'b0;
        assign cap_wptr = {CAP_PTR_WIDTH{1'b0}};
        assign cap_fill = {CAP_PTR_WIDTH{1'b0}};
        assign cap_overflow_count = 64'd0;
        assign cap_overflow_event = 1'b0;
        assign cap_frame_count = 64'd0;
        assign cap_bresp_error_count = 64'd0;
        assign cap_busy = 1'b0;
        assign cap_ring_error = 1'b0;
        assign dma_addr_error = 1'b0;
        assign dma_burst_error = 1'b0;
        assign s_axi_awready = 1'b0;
        assign s_axi_wready = 1'b0;
        assign s_axi_bid = {AXI_ID_WIDTH{1'b0}};
        assign s_axi_bresp = 2'b00;
        assign s_axi_bvalid = 1'b0;
        assign s_axi_arready = 1'b0;
        assign s_axi_rid = {AXI_ID_WIDTH{1'b0}};
        assign s_axi_rdata = {AXI_DATA_WIDTH{1'b0}};
        assign s_axi_rresp = 2'b00;
        assign s_axi_rlast = 1'b0;
        assign s_axi_rvalid = 1'b0;
        assign m_axi_ddr_awid = {DDR_ID_WIDTH{1'b0}};
        assign m_axi_ddr_awaddr = {DDR_ADDR_WIDTH{1'b0}};
        assign m_axi_ddr_awlen = 8'd0;
        assign m_axi_ddr_awsize = 3'd0;
        assign m_axi_ddr_awburst = 2'b01;
        assign m_axi_ddr_awlock = 1'b0;
        assign m_axi_ddr_awcache = 4'd0;
        assign m_axi_ddr_awprot = 3'd0;
        assign m_axi_ddr_awvalid = 1'b0;
        assign m_axi_ddr_wdata = {DDR_DATA_WIDTH{1'b0}};
        assign m_axi_ddr_wstrb = {DDR_DATA_WIDTH/8{1'b0}};
        assign m_axi_ddr_wlast = 1'b0;
        assign m_axi_ddr_wvalid = 1'b0;
        assign m_axi_ddr_bready = 1'b0;
        assign m_axi_ddr_arid = {DDR_ID_WIDTH{1'b0}};
        assign m_axi_ddr_araddr = {DDR_ADDR_WIDTH{1'b0}};
        assign m_axi_ddr_arlen = 8'd0;
        assign m_axi_ddr_arsize = 3'd0;
        assign m_axi_ddr_arburst = 2'b01;
        assign m_axi_ddr_arlock = 1'b0;
        assign m_axi_ddr_arcache = 4'd0;
        assign m_axi_ddr_arprot = 3'd0;
        assign m_axi_ddr_arvalid = 1'b0;
        assign m_axi_ddr_rready = 1'b0;
        // The tied-off ports' inputs, and the capture settings without a writer.
        wire unused_mm = &{1'b0, s_axi_awid, s_axi_awaddr, s_axi_awlen, s_axi_awsize,
            s_axi_awburst, s_axi_awlock, s_axi_awcache, s_axi_awprot, s_axi_awvalid,
            s_axi_wdata, s_axi_wstrb, s_axi_wlast, s_axi_wvalid, s_axi_bready, s_axi_arid,
            s_axi_araddr, s_axi_arlen, s_axi_arsize, s_axi_arburst, s_axi_arlock,
            s_axi_arcache, s_axi_arprot, s_axi_arvalid, s_axi_rready, m_axi_ddr_awready,
            m_axi_ddr_wready, m_axi_ddr_bid, m_axi_ddr_bresp, m_axi_ddr_bvalid,
            m_axi_ddr_arready, m_axi_ddr_rid, m_axi_ddr_rdata, m_axi_ddr_rresp,
            m_axi_ddr_rlast, m_axi_ddr_rvalid, ddr_clk, ddr_rst, cap_base_reg, cap_size_reg,
            cap_rptr_reg, cap_ring_reset_reg, cap_tvalid, 1'b0};
    end
endgenerate

// Status that no register shows yet: the checker's per-frame verdict matters only to ECHO's
// timing (every request is answered), source 1 has no one-shot use, and the capture writer's
// bus error count and busy flag are diagnostics for a later register. Byte offsets within a
// word and address bits above the window are ignored: the window repeats across the BAR.
wire unused_status = chk_frame_ok || src1_send_ready || cap_busy || (|cap_bresp_error_count)
    || (|reg_rd_addr) || (|reg_wr_addr);

endmodule

`resetall
