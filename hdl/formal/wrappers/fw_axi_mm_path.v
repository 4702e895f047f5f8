/*
 * Proof wrapper of axi_mm_path, the composition of five proven blocks (write arbiter, both width
 * converters, both clock crossings), at narrow widths: 16-bit slaves, a 32-bit DDR port. Each
 * block is proven on its own against the rules its neighbours assume, the crossings under every
 * clock ratio and phase; this proof checks what only the whole shows: that the blocks' IDs,
 * lengths and routing fit together end to end. Both clocks are one clock here (so that the
 * solver's depth goes into bursts rather than into clock phases; async_fifo behaves as it does
 * at any other ratio), and one reset resets both sides.
 *
 * The DMA port and the capture port are checked as AXI4 slaves (the masters' rules assumed),
 * the DDR port as a master (its rules asserted). Assumed of the neighbours: each master gives a
 * burst one or two beats and puts WLAST where it ends, and DMA reads are one or two beats long;
 * the DDR controller answers only what it has taken, in order, with each burst's own ID and its
 * RLAST on its last beat, and holds at most four bursts of each kind.
 *
 * What the path promises (its header comment), besides every bus's rules: a write response
 * reaches the source whose burst it answers, in that source's order, with the burst's ID; a
 * read burst's beats come back for a burst taken, in issue order with its ID. (That RLAST
 * marks a read burst's last beat is axi_rd_upsizer's promise, proven on its own, the crossing
 * passing beats on unchanged; checked across the whole path, it would cost this proof more
 * than its depth.)
 * Order is checked by data independence: one burst of each kind, of the solver's choice, is
 * recorded as it is taken and compared where its answer comes out.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axi_mm_path #
(
    // Width of the slaves' data buses in bits (narrow, so that the solver's state stays small)
    parameter DATA_WIDTH = 16,
    // Width of the slaves' byte addresses in bits
    parameter ADDR_WIDTH = 16,
    // Width of the DMA port's ID
    parameter ID_WIDTH = 1,
    // Width of the DDR port's data bus in bits: two slave beats a DDR beat
    parameter DDR_DATA_WIDTH = 32,
    // Width of the DDR port's byte address in bits (the least the property modules take)
    parameter DDR_ADDR_WIDTH = 12,
    // Width of the slaves' strobes
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of the DDR port's strobes
    parameter DDR_STRB_WIDTH = (DDR_DATA_WIDTH/8)
)
(
    input  wire                        clk,
    input  wire                        rst,
    input  wire [ID_WIDTH-1:0]         s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]       s_axi_awaddr,
    input  wire [7:0]                  s_axi_awlen,
    input  wire [2:0]                  s_axi_awsize,
    input  wire [1:0]                  s_axi_awburst,
    input  wire                        s_axi_awlock,
    input  wire [3:0]                  s_axi_awcache,
    input  wire [2:0]                  s_axi_awprot,
    input  wire                        s_axi_awvalid,
    input  wire [DATA_WIDTH-1:0]       s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]       s_axi_wstrb,
    input  wire                        s_axi_wlast,
    input  wire                        s_axi_wvalid,
    input  wire                        s_axi_bready,
    input  wire [ID_WIDTH-1:0]         s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]       s_axi_araddr,
    input  wire [7:0]                  s_axi_arlen,
    input  wire [2:0]                  s_axi_arsize,
    input  wire [1:0]                  s_axi_arburst,
    input  wire                        s_axi_arlock,
    input  wire [3:0]                  s_axi_arcache,
    input  wire [2:0]                  s_axi_arprot,
    input  wire                        s_axi_arvalid,
    input  wire                        s_axi_rready,
    input  wire [ADDR_WIDTH-1:0]       s_axi_cap_awaddr,
    input  wire [7:0]                  s_axi_cap_awlen,
    input  wire [2:0]                  s_axi_cap_awsize,
    input  wire [1:0]                  s_axi_cap_awburst,
    input  wire                        s_axi_cap_awvalid,
    input  wire [DATA_WIDTH-1:0]       s_axi_cap_wdata,
    input  wire [STRB_WIDTH-1:0]       s_axi_cap_wstrb,
    input  wire                        s_axi_cap_wlast,
    input  wire                        s_axi_cap_wvalid,
    input  wire                        s_axi_cap_bready,
    input  wire                        m_axi_ddr_awready,
    input  wire                        m_axi_ddr_wready,
    input  wire [ID_WIDTH:0]           m_axi_ddr_bid,
    input  wire [1:0]                  m_axi_ddr_bresp,
    input  wire                        m_axi_ddr_bvalid,
    input  wire                        m_axi_ddr_arready,
    input  wire [ID_WIDTH:0]           m_axi_ddr_rid,
    input  wire [DDR_DATA_WIDTH-1:0]   m_axi_ddr_rdata,
    input  wire [1:0]                  m_axi_ddr_rresp,
    input  wire                        m_axi_ddr_rlast,
    input  wire                        m_axi_ddr_rvalid
);

`ifdef FORMAL

    wire                        s_axi_awready;
    wire                        s_axi_wready;
    wire [ID_WIDTH-1:0]         s_axi_bid;
    wire [1:0]                  s_axi_bresp;
    wire                        s_axi_bvalid;
    wire                        s_axi_arready;
    wire [ID_WIDTH-1:0]         s_axi_rid;
    wire [DATA_WIDTH-1:0]       s_axi_rdata;
    wire [1:0]                  s_axi_rresp;
    wire                        s_axi_rlast;
    wire                        s_axi_rvalid;
    wire                        s_axi_cap_awready;
    wire                        s_axi_cap_wready;
    wire [1:0]                  s_axi_cap_bresp;
    wire                        s_axi_cap_bvalid;
    wire [ID_WIDTH:0]           m_axi_ddr_awid;
    wire [DDR_ADDR_WIDTH-1:0]   m_axi_ddr_awaddr;
    wire [7:0]                  m_axi_ddr_awlen;
    wire [2:0]                  m_axi_ddr_awsize;
    wire [1:0]                  m_axi_ddr_awburst;
    wire                        m_axi_ddr_awlock;
    wire [3:0]                  m_axi_ddr_awcache;
    wire [2:0]                  m_axi_ddr_awprot;
    wire                        m_axi_ddr_awvalid;
    wire [DDR_DATA_WIDTH-1:0]   m_axi_ddr_wdata;
    wire [DDR_STRB_WIDTH-1:0]   m_axi_ddr_wstrb;
    wire                        m_axi_ddr_wlast;
    wire                        m_axi_ddr_wvalid;
    wire                        m_axi_ddr_bready;
    wire [ID_WIDTH:0]           m_axi_ddr_arid;
    wire [DDR_ADDR_WIDTH-1:0]   m_axi_ddr_araddr;
    wire [7:0]                  m_axi_ddr_arlen;
    wire [2:0]                  m_axi_ddr_arsize;
    wire [1:0]                  m_axi_ddr_arburst;
    wire                        m_axi_ddr_arlock;
    wire [3:0]                  m_axi_ddr_arcache;
    wire [2:0]                  m_axi_ddr_arprot;
    wire                        m_axi_ddr_arvalid;
    wire                        m_axi_ddr_rready;
    wire                        addr_error;
    wire                        burst_error;

    axi_mm_path #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH),
        .DDR_DATA_WIDTH(DDR_DATA_WIDTH),
        .DDR_ADDR_WIDTH(DDR_ADDR_WIDTH),
        .DDR_ID_WIDTH(ID_WIDTH + 1),
        .READ_OUTSTANDING(2),
        .DATA_FIFO_ADDR_WIDTH(2)
    ) dut (
        .clk(clk),
        .rst(rst),
        .ddr_clk(clk),
        .ddr_rst(rst),
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
        .s_axi_cap_awaddr(s_axi_cap_awaddr),
        .s_axi_cap_awlen(s_axi_cap_awlen),
        .s_axi_cap_awsize(s_axi_cap_awsize),
        .s_axi_cap_awburst(s_axi_cap_awburst),
        .s_axi_cap_awvalid(s_axi_cap_awvalid),
        .s_axi_cap_awready(s_axi_cap_awready),
        .s_axi_cap_wdata(s_axi_cap_wdata),
        .s_axi_cap_wstrb(s_axi_cap_wstrb),
        .s_axi_cap_wlast(s_axi_cap_wlast),
        .s_axi_cap_wvalid(s_axi_cap_wvalid),
        .s_axi_cap_wready(s_axi_cap_wready),
        .s_axi_cap_bresp(s_axi_cap_bresp),
        .s_axi_cap_bvalid(s_axi_cap_bvalid),
        .s_axi_cap_bready(s_axi_cap_bready),
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
        .addr_error(addr_error),
        .burst_error(burst_error),
        .fault_rd_drop_beat_en(1'b0)
    );

    faxi_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_dma (
        .clk(clk),
        .rst(rst),
        .awid(s_axi_awid),
        .awaddr(s_axi_awaddr),
        .awlen(s_axi_awlen),
        .awsize(s_axi_awsize),
        .awburst(s_axi_awburst),
        .awvalid(s_axi_awvalid),
        .awready(s_axi_awready),
        .wdata(s_axi_wdata),
        .wstrb(s_axi_wstrb),
        .wlast(s_axi_wlast),
        .wvalid(s_axi_wvalid),
        .wready(s_axi_wready),
        .bid(s_axi_bid),
        .bresp(s_axi_bresp),
        .bvalid(s_axi_bvalid),
        .bready(s_axi_bready),
        .arid(s_axi_arid),
        .araddr(s_axi_araddr),
        .arlen(s_axi_arlen),
        .arsize(s_axi_arsize),
        .arburst(s_axi_arburst),
        .arvalid(s_axi_arvalid),
        .arready(s_axi_arready),
        .rid(s_axi_rid),
        .rdata(s_axi_rdata),
        .rresp(s_axi_rresp),
        .rlast(s_axi_rlast),
        .rvalid(s_axi_rvalid),
        .rready(s_axi_rready)
    );

    faxi_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(1)
    ) f_cap (
        .clk(clk),
        .rst(rst),
        .awid(1'b0),
        .awaddr(s_axi_cap_awaddr),
        .awlen(s_axi_cap_awlen),
        .awsize(s_axi_cap_awsize),
        .awburst(s_axi_cap_awburst),
        .awvalid(s_axi_cap_awvalid),
        .awready(s_axi_cap_awready),
        .wdata(s_axi_cap_wdata),
        .wstrb(s_axi_cap_wstrb),
        .wlast(s_axi_cap_wlast),
        .wvalid(s_axi_cap_wvalid),
        .wready(s_axi_cap_wready),
        .bid(1'b0),
        .bresp(s_axi_cap_bresp),
        .bvalid(s_axi_cap_bvalid),
        .bready(s_axi_cap_bready),
        .arid(1'b0),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid(1'b0),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    faxi_master #(
        .DATA_WIDTH(DDR_DATA_WIDTH),
        .ADDR_WIDTH(DDR_ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH + 1)
    ) f_ddr (
        .clk(clk),
        .rst(rst),
        .awid(m_axi_ddr_awid),
        .awaddr(m_axi_ddr_awaddr),
        .awlen(m_axi_ddr_awlen),
        .awsize(m_axi_ddr_awsize),
        .awburst(m_axi_ddr_awburst),
        .awvalid(m_axi_ddr_awvalid),
        .awready(m_axi_ddr_awready),
        .wdata(m_axi_ddr_wdata),
        .wstrb(m_axi_ddr_wstrb),
        .wlast(m_axi_ddr_wlast),
        .wvalid(m_axi_ddr_wvalid),
        .wready(m_axi_ddr_wready),
        .bid(m_axi_ddr_bid),
        .bresp(m_axi_ddr_bresp),
        .bvalid(m_axi_ddr_bvalid),
        .bready(m_axi_ddr_bready),
        .arid(m_axi_ddr_arid),
        .araddr(m_axi_ddr_araddr),
        .arlen(m_axi_ddr_arlen),
        .arsize(m_axi_ddr_arsize),
        .arburst(m_axi_ddr_arburst),
        .arvalid(m_axi_ddr_arvalid),
        .arready(m_axi_ddr_arready),
        .rid(m_axi_ddr_rid),
        .rdata(m_axi_ddr_rdata),
        .rresp(m_axi_ddr_rresp),
        .rlast(m_axi_ddr_rlast),
        .rvalid(m_axi_ddr_rvalid),
        .rready(m_axi_ddr_rready)
    );

    wire f_dma_aw = s_axi_awvalid && s_axi_awready;
    wire f_dma_w = s_axi_wvalid && s_axi_wready;
    wire f_dma_b = s_axi_bvalid && s_axi_bready;
    wire f_dma_ar = s_axi_arvalid && s_axi_arready;
    wire f_dma_r = s_axi_rvalid && s_axi_rready;
    wire f_cap_aw = s_axi_cap_awvalid && s_axi_cap_awready;
    wire f_cap_w = s_axi_cap_wvalid && s_axi_cap_wready;
    wire f_cap_b = s_axi_cap_bvalid && s_axi_cap_bready;
    wire f_ddr_aw = m_axi_ddr_awvalid && m_axi_ddr_awready;
    wire f_ddr_w = m_axi_ddr_wvalid && m_axi_ddr_wready;
    wire f_ddr_b = m_axi_ddr_bvalid && m_axi_ddr_bready;
    wire f_ddr_ar = m_axi_ddr_arvalid && m_axi_ddr_arready;
    wire f_ddr_r = m_axi_ddr_rvalid && m_axi_ddr_rready;

    /*
     * The two write masters: bursts of one or two beats (even and odd bursts each of a length
     * the solver picks, so that lengths mix), WLAST on each burst's last beat.
     */
    (* anyconst *) reg f_len_even;
    (* anyconst *) reg f_len_odd;
    reg [3:0] f_dma_aw_n = 4'd0;    // DMA bursts taken
    reg [3:0] f_dma_wlast_n = 4'd0; // DMA bursts whose last beat was taken
    reg       f_dma_beat = 1'b0;    // beats of the current DMA burst taken
    reg [3:0] f_dma_b_n = 4'd0;     // DMA responses handed back
    reg [3:0] f_cap_aw_n = 4'd0;
    reg [3:0] f_cap_wlast_n = 4'd0;
    reg       f_cap_beat = 1'b0;
    reg [3:0] f_cap_b_n = 4'd0;

    always @(posedge clk) begin
        if (rst) begin
            f_dma_aw_n <= 4'd0;
            f_dma_wlast_n <= 4'd0;
            f_dma_beat <= 1'b0;
            f_dma_b_n <= 4'd0;
            f_cap_aw_n <= 4'd0;
            f_cap_wlast_n <= 4'd0;
            f_cap_beat <= 1'b0;
            f_cap_b_n <= 4'd0;
        end else begin
            if (f_dma_aw) f_dma_aw_n <= f_dma_aw_n + 4'd1;
            if (f_dma_w) begin
                f_dma_beat <= !s_axi_wlast;
                if (s_axi_wlast) f_dma_wlast_n <= f_dma_wlast_n + 4'd1;
            end
            if (f_dma_b) f_dma_b_n <= f_dma_b_n + 4'd1;
            if (f_cap_aw) f_cap_aw_n <= f_cap_aw_n + 4'd1;
            if (f_cap_w) begin
                f_cap_beat <= !s_axi_cap_wlast;
                if (s_axi_cap_wlast) f_cap_wlast_n <= f_cap_wlast_n + 4'd1;
            end
            if (f_cap_b) f_cap_b_n <= f_cap_b_n + 4'd1;
        end
    end

    always @(*) begin
        if (s_axi_awvalid) begin
            assume (s_axi_awlen == {7'd0, f_dma_aw_n[0] ? f_len_odd : f_len_even});
        end
        if (s_axi_wvalid) begin
            assume (s_axi_wlast == (f_dma_beat == (f_dma_wlast_n[0] ? f_len_odd : f_len_even)));
        end
        if (s_axi_cap_awvalid) begin
            assume (s_axi_cap_awlen == {7'd0, f_cap_aw_n[0] ? f_len_odd : f_len_even});
        end
        if (s_axi_cap_wvalid) begin
            assume (s_axi_cap_wlast == (f_cap_beat == (f_cap_wlast_n[0] ? f_len_odd : f_len_even)));
        end
        if (s_axi_arvalid) begin
            assume (s_axi_arlen <= 8'd1);
        end
    end

    /*
     * The DDR controller: what it has taken, as queues of four (it takes no more), answered in
     * order with each burst's own ID; a read's RLAST on its last beat.
     */
    reg [ID_WIDTH:0] f_ddr_wid [0:3];
    reg [2:0]        f_ddr_aw_q = 3'd0;   // write bursts taken and not answered
    reg [2:0]        f_ddr_wlast_q = 3'd0; // of those, whose last beat was taken
    reg [ID_WIDTH:0] f_ddr_rid [0:3];
    reg [7:0]        f_ddr_rlen [0:3];
    reg [2:0]        f_ddr_ar_q = 3'd0;   // read bursts taken and not finished
    reg [7:0]        f_ddr_rbeat = 8'd0;  // beats of the oldest read burst sent
    integer f_i;

    initial begin
        for (f_i = 0; f_i < 4; f_i = f_i + 1) begin
            f_ddr_wid[f_i] = {(ID_WIDTH+1){1'b0}};
            f_ddr_rid[f_i] = {(ID_WIDTH+1){1'b0}};
            f_ddr_rlen[f_i] = 8'd0;
        end
    end

    always @(posedge clk) begin
        if (rst) begin
            f_ddr_aw_q <= 3'd0;
            f_ddr_wlast_q <= 3'd0;
            f_ddr_ar_q <= 3'd0;
            f_ddr_rbeat <= 8'd0;
        end else begin
            if (f_ddr_b) begin
                for (f_i = 0; f_i < 3; f_i = f_i + 1) begin
                    f_ddr_wid[f_i] <= f_ddr_wid[f_i + 1];
                end
            end
            if (f_ddr_aw) begin
                f_ddr_wid[f_ddr_aw_q - {2'd0, f_ddr_b}] <= m_axi_ddr_awid;
            end
            f_ddr_aw_q <= f_ddr_aw_q + {2'd0, f_ddr_aw} - {2'd0, f_ddr_b};
            f_ddr_wlast_q <= f_ddr_wlast_q + {2'd0, f_ddr_w && m_axi_ddr_wlast} - {2'd0, f_ddr_b};
            if (f_ddr_r && m_axi_ddr_rlast) begin
                for (f_i = 0; f_i < 3; f_i = f_i + 1) begin
                    f_ddr_rid[f_i] <= f_ddr_rid[f_i + 1];
                    f_ddr_rlen[f_i] <= f_ddr_rlen[f_i + 1];
                end
            end
            if (f_ddr_ar) begin
                f_ddr_rid[f_ddr_ar_q - {2'd0, f_ddr_r && m_axi_ddr_rlast}] <= m_axi_ddr_arid;
                f_ddr_rlen[f_ddr_ar_q - {2'd0, f_ddr_r && m_axi_ddr_rlast}] <= m_axi_ddr_arlen;
            end
            f_ddr_ar_q <= f_ddr_ar_q + {2'd0, f_ddr_ar} - {2'd0, f_ddr_r && m_axi_ddr_rlast};
            if (f_ddr_r) f_ddr_rbeat <= m_axi_ddr_rlast ? 8'd0 : f_ddr_rbeat + 8'd1;
        end
    end

    always @(*) begin
        if (f_ddr_aw_q == 3'd4) assume (!m_axi_ddr_awready);
        if (f_ddr_ar_q == 3'd4) assume (!m_axi_ddr_arready);
        if (!rst && m_axi_ddr_bvalid) begin
            assume (f_ddr_aw_q != 3'd0 && f_ddr_wlast_q != 3'd0);
            assume (m_axi_ddr_bid == f_ddr_wid[0]);
        end
        if (!rst && m_axi_ddr_rvalid) begin
            assume (f_ddr_ar_q != 3'd0);
            assume (m_axi_ddr_rid == f_ddr_rid[0]);
            assume (m_axi_ddr_rlast == (f_ddr_rbeat == f_ddr_rlen[0]));
        end
    end

    /*
     * Data independence: the DMA write burst and the DMA read burst of the solver's choice,
     * recorded as they are taken (the capture port has no ID; its responses are counted).
     */
    (* anyconst *) reg [3:0] f_pick_dma;
    (* anyconst *) reg [3:0] f_pick_rd;
    reg [ID_WIDTH-1:0] f_dma_id_seen = {ID_WIDTH{1'b0}};
    reg [ID_WIDTH-1:0] f_rd_id_seen = {ID_WIDTH{1'b0}};
    reg [3:0]          f_rd_ar_n = 4'd0;    // DMA read bursts taken
    reg [3:0]          f_rd_rlast_n = 4'd0; // DMA read bursts finished

    always @(posedge clk) begin
        if (rst) begin
            f_rd_ar_n <= 4'd0;
            f_rd_rlast_n <= 4'd0;
        end else begin
            if (f_dma_aw && f_dma_aw_n == f_pick_dma) f_dma_id_seen <= s_axi_awid;
            if (f_dma_ar) begin
                f_rd_ar_n <= f_rd_ar_n + 4'd1;
                if (f_rd_ar_n == f_pick_rd) f_rd_id_seen <= s_axi_arid;
            end
            if (f_dma_r && s_axi_rlast) f_rd_rlast_n <= f_rd_rlast_n + 4'd1;
        end
    end

    always @(*) begin
        if (!rst) begin
            // A response reaches the source whose burst it answers, only once that burst's
            // address and last beat are taken, and with the burst's ID.
            promise_dma_b_answers_its_burst: assert (!s_axi_bvalid
                || (f_dma_b_n < f_dma_aw_n && f_dma_b_n < f_dma_wlast_n));
            promise_cap_b_answers_its_burst: assert (!s_axi_cap_bvalid
                || (f_cap_b_n < f_cap_aw_n && f_cap_b_n < f_cap_wlast_n));
            promise_dma_b_with_its_id: assert (!s_axi_bvalid || f_dma_b_n != f_pick_dma
                || s_axi_bid == f_dma_id_seen);
            // A read's beats come back for a burst taken, in issue order: the picked burst's
            // with its ID.
            promise_r_answers_a_burst: assert (!s_axi_rvalid || f_rd_rlast_n < f_rd_ar_n);
            promise_r_with_its_id: assert (!s_axi_rvalid || f_rd_rlast_n != f_pick_rd
                || s_axi_rid == f_rd_id_seen);
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_dma_write_answered: cover (f_dma_b && s_axi_bresp == 2'b00);
            cover_cap_write_answered: cover (f_cap_b && s_axi_cap_bresp == 2'b00);
            cover_read_answered: cover (f_dma_r && s_axi_rlast && s_axi_rresp == 2'b00);
            cover_refused: cover (addr_error || burst_error);
        end
        cover_reset_mid_burst: cover (rst && $past(m_axi_ddr_wvalid && !m_axi_ddr_wlast));
    end

`endif

endmodule

`resetall
