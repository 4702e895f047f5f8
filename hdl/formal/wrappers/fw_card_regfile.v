/*
 * Proof wrapper of card_regfile, the card's register file behind the user BAR: its AXI4-Lite
 * port is checked as a slave (the master's rules assumed, the B and R rules asserted), every
 * status input is free. axil_reg_if is proven on its own under the assumption that its decoder
 * answers a read RD_LATENCY cycles after reg_rd_en; this proof checks that the register file's
 * read multiplexer keeps that promise, through what a host sees: ID and VERSION read as the
 * values it is built with (the register map's), and SCRATCH reads back what the last write to it left, byte by byte (a read with
 * no write in progress beside it). Addresses come from the generated register map.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_card_regfile #
(
    // Which XDMA configuration (card_core's VARIANT): 3 accepts every CONTROL mode
    parameter VARIANT = 3,
    // Width of the user BAR byte address in bits: the register window only
    parameter ADDR_WIDTH = 12,
    // Width of the DDR address in bits
    parameter DDR_ADDR_WIDTH = 31,
    // Width of the capture ring's pointers in bits
    parameter PTR_WIDTH = 31
)
(
    input  wire                       clk,
    input  wire                       rst,
    input  wire [ADDR_WIDTH-1:0]      s_axil_awaddr,
    input  wire [2:0]                 s_axil_awprot,
    input  wire                       s_axil_awvalid,
    input  wire [31:0]                s_axil_wdata,
    input  wire [3:0]                 s_axil_wstrb,
    input  wire                       s_axil_wvalid,
    input  wire                       s_axil_bready,
    input  wire [ADDR_WIDTH-1:0]      s_axil_araddr,
    input  wire [2:0]                 s_axil_arprot,
    input  wire                       s_axil_arvalid,
    input  wire                       s_axil_rready,
    input  wire                       src0_clearing,
    input  wire                       src0_clear_tail,
    input  wire                       src1_clearing,
    input  wire                       src1_clear_tail,
    input  wire [63:0]                src0_frames_sent,
    input  wire [63:0]                src0_frames_dropped,
    input  wire [63:0]                src1_frames_sent,
    input  wire [63:0]                src1_frames_dropped,
    input  wire [63:0]                chk_frames_good,
    input  wire [63:0]                chk_frames_bad,
    input  wire [63:0]                chk_frames_missing,
    input  wire [31:0]                chk_err_magic,
    input  wire [31:0]                chk_err_length,
    input  wire [31:0]                chk_err_crc,
    input  wire [31:0]                chk_err_version,
    input  wire [31:0]                chk_last_seq,
    input  wire [PTR_WIDTH-1:0]       cap_wptr,
    input  wire [PTR_WIDTH-1:0]       cap_fill,
    input  wire [63:0]                cap_overflow_count,
    input  wire [63:0]                cap_frame_count,
    input  wire                       cap_overflow_event,
    input  wire                       cap_ring_error,
    input  wire                       dma_addr_error,
    input  wire                       dma_burst_error,
    input  wire                       usr_irq_ack
);

`ifdef FORMAL

`include "card_regs.vh"

    wire                     s_axil_awready;
    wire                     s_axil_wready;
    wire [1:0]                 s_axil_bresp;
    wire                     s_axil_bvalid;
    wire                     s_axil_arready;
    wire [31:0]                s_axil_rdata;
    wire [1:0]                 s_axil_rresp;
    wire                     s_axil_rvalid;
    wire [2:0]                 mode;
    wire                     ch0_en;
    wire                     ch1_en;
    wire                     clear;
    wire [63:0]                timestamp;
    wire [31:0]                src0_frame_len;
    wire [31:0]                src0_gap;
    wire                     src0_pattern;
    wire [31:0]                src0_seed;
    wire                     src0_drop;
    wire [31:0]                src1_frame_len;
    wire [31:0]                src1_gap;
    wire                     src1_pattern;
    wire [31:0]                src1_seed;
    wire                     src1_drop;
    wire [PTR_WIDTH-1:0]       cap_base;
    wire [PTR_WIDTH-1:0]       cap_size;
    wire [PTR_WIDTH-1:0]       cap_rptr;
    wire                     cap_ring_reset;
    wire                     usr_irq_req;

    card_regfile #(
        .VARIANT(VARIANT),
        .ADDR_WIDTH(ADDR_WIDTH),
        .DDR_ADDR_WIDTH(DDR_ADDR_WIDTH),
        .PTR_WIDTH(PTR_WIDTH),
        .CARD_ID(REG_ID_RESET),
        .CARD_VERSION(REG_VERSION_RESET)
    ) dut (
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
        .mode(mode),
        .ch0_en(ch0_en),
        .ch1_en(ch1_en),
        .clear(clear),
        .timestamp(timestamp),
        .src0_frame_len(src0_frame_len),
        .src0_gap(src0_gap),
        .src0_pattern(src0_pattern),
        .src0_seed(src0_seed),
        .src0_drop(src0_drop),
        .src1_frame_len(src1_frame_len),
        .src1_gap(src1_gap),
        .src1_pattern(src1_pattern),
        .src1_seed(src1_seed),
        .src1_drop(src1_drop),
        .cap_base(cap_base),
        .cap_size(cap_size),
        .cap_rptr(cap_rptr),
        .cap_ring_reset(cap_ring_reset),
        .src0_clearing(src0_clearing),
        .src0_clear_tail(src0_clear_tail),
        .src1_clearing(src1_clearing),
        .src1_clear_tail(src1_clear_tail),
        .src0_frames_sent(src0_frames_sent),
        .src0_frames_dropped(src0_frames_dropped),
        .src1_frames_sent(src1_frames_sent),
        .src1_frames_dropped(src1_frames_dropped),
        .chk_frames_good(chk_frames_good),
        .chk_frames_bad(chk_frames_bad),
        .chk_frames_missing(chk_frames_missing),
        .chk_err_magic(chk_err_magic),
        .chk_err_length(chk_err_length),
        .chk_err_crc(chk_err_crc),
        .chk_err_version(chk_err_version),
        .chk_last_seq(chk_last_seq),
        .cap_wptr(cap_wptr),
        .cap_fill(cap_fill),
        .cap_overflow_count(cap_overflow_count),
        .cap_frame_count(cap_frame_count),
        .cap_overflow_event(cap_overflow_event),
        .cap_ring_error(cap_ring_error),
        .dma_addr_error(dma_addr_error),
        .dma_burst_error(dma_burst_error),
        .usr_irq_req(usr_irq_req),
        .usr_irq_ack(usr_irq_ack)
    );

    faxil_slave #(
        .DATA_WIDTH(32),
        .ADDR_WIDTH(ADDR_WIDTH)
    ) f_in (
        .clk(clk),
        .rst(rst),
        .awaddr(s_axil_awaddr),
        .awprot(s_axil_awprot),
        .awvalid(s_axil_awvalid),
        .awready(s_axil_awready),
        .wdata(s_axil_wdata),
        .wstrb(s_axil_wstrb),
        .wvalid(s_axil_wvalid),
        .wready(s_axil_wready),
        .bresp(s_axil_bresp),
        .bvalid(s_axil_bvalid),
        .bready(s_axil_bready),
        .araddr(s_axil_araddr),
        .arprot(s_axil_arprot),
        .arvalid(s_axil_arvalid),
        .arready(s_axil_arready),
        .rdata(s_axil_rdata),
        .rresp(s_axil_rresp),
        .rvalid(s_axil_rvalid),
        .rready(s_axil_rready)
    );

    wire f_aw = s_axil_awvalid && s_axil_awready;
    wire f_w = s_axil_wvalid && s_axil_wready;
    wire f_b = s_axil_bvalid && s_axil_bready;
    wire f_ar = s_axil_arvalid && s_axil_arready;
    wire f_r = s_axil_rvalid && s_axil_rready;

    // The write in progress (axil_reg_if takes one at a time): its address and data, whether
    // any of it has been taken, and what SCRATCH holds after the writes answered so far.
    reg [ADDR_WIDTH-1:0] f_wr_addr = {ADDR_WIDTH{1'b0}};
    reg [31:0]           f_wr_data = 32'd0;
    reg [3:0]            f_wr_strb = 4'd0;
    reg                  f_wr_busy = 1'b0;
    reg [31:0]           f_scratch = REG_SCRATCH_RESET;
    // The read in progress: its address, and whether no write was in progress beside it.
    reg [ADDR_WIDTH-1:0] f_rd_addr = {ADDR_WIDTH{1'b0}};
    reg                  f_rd_alone = 1'b0;
    reg                  f_scratch_read = 1'b0;  // a SCRATCH read alone answered (for the cover)
    integer f_i;

    wire [REGS_WINDOW_BITS-1:0] f_wr_off = {f_wr_addr[REGS_WINDOW_BITS-1:2], 2'b00};
    wire [REGS_WINDOW_BITS-1:0] f_rd_off = {f_rd_addr[REGS_WINDOW_BITS-1:2], 2'b00};

    always @(posedge clk) begin
        if (rst) begin
            f_wr_busy <= 1'b0;
            f_scratch <= REG_SCRATCH_RESET;
            f_rd_alone <= 1'b0;
            f_scratch_read <= 1'b0;
        end else begin
            if (f_aw) f_wr_addr <= s_axil_awaddr;
            if (f_w) begin
                f_wr_data <= s_axil_wdata;
                f_wr_strb <= s_axil_wstrb;
            end
            if (f_aw || f_w) f_wr_busy <= 1'b1;
            if (f_b) begin
                f_wr_busy <= 1'b0;
                if (s_axil_bresp == 2'b00 && f_wr_off == REG_SCRATCH) begin
                    for (f_i = 0; f_i < 4; f_i = f_i + 1) begin
                        if (f_wr_strb[f_i]) f_scratch[f_i*8 +: 8] <= f_wr_data[f_i*8 +: 8];
                    end
                end
            end
            if (f_ar) begin
                f_rd_addr <= s_axil_araddr;
                f_rd_alone <= !f_wr_busy && !f_aw && !f_w;
            end else if (f_aw || f_w || f_b) begin
                f_rd_alone <= 1'b0;
            end
            if (f_r && f_rd_alone && f_rd_off == REG_SCRATCH) f_scratch_read <= 1'b1;
        end
    end

    always @(*) begin
        if (!rst && s_axil_rvalid) begin
            promise_id_reads_its_constant: assert (f_rd_off != REG_ID
                || (s_axil_rresp == 2'b00 && s_axil_rdata == REG_ID_RESET));
            promise_version_reads_its_constant: assert (f_rd_off != REG_VERSION
                || (s_axil_rresp == 2'b00 && s_axil_rdata == REG_VERSION_RESET));
            promise_scratch_reads_what_was_written: assert (!f_rd_alone
                || f_rd_off != REG_SCRATCH || s_axil_rdata == f_scratch);
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_scratch_written_then_read: cover (f_scratch_read && f_scratch != REG_SCRATCH_RESET);
            cover_id_read: cover (f_r && f_rd_off == REG_ID);
            cover_write_refused: cover (f_b && s_axil_bresp != 2'b00);
        end
        cover_reset_mid_read: cover (rst && $past(s_axil_rvalid && !s_axil_rready));
    end

`endif

endmodule

`resetall
